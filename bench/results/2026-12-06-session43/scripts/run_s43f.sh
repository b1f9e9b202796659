#!/usr/bin/env bash
# Session 43, call f, on the final device code (ee4b96b + steal_min): scripts/gpu-check (steal_min's benchmarks ran
# in call e, as the build 'steal').
# Pack: tar -cJf build/carry/s43f.tar.xz build/cuda/tests/weft_tests build/cuda/tests/weft_device_smoke \
#   build/cuda/examples/saxpy build/cuda/examples/file_pipeline build/cuda/bench/weft_bench_device \
#   build/cuda/bench/libbenchmark.so.1debian
set -u
o=$OUT/s43f
mkdir -p "$o"
tar -xJf build/carry/s43f.tar.xz
t0=$(date +%s)
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
tar -czf "$OUT/s43f.tgz" -C "$OUT" s43f
