#!/usr/bin/env bash
# Session 41, call g: the batch count published every 16th trip (device_worker.hpp; for the GPU shutdown's idle
# look). 1. scripts/gpu-check on that build; 2. weft_bench_device A/B against base (8004638's device code,
# build/base41), one process each, alternating, 2 rounds; 3. the reactor's shutdown tests 3 more times on cuda.
# Pack: tar -cJf build/carry/s41g.tar.xz build/cuda/tests/weft_tests build/cuda/tests/weft_device_smoke \
#   build/cuda/examples/saxpy build/cuda/examples/file_pipeline build/cuda/bench/weft_bench_device \
#   build/cuda/bench/libbenchmark.so.1debian build/base41/weft_bench_device
set -u
o=$OUT/s41g
mkdir -p "$o"
tar -xJf build/carry/s41g.tar.xz
t0=$(date +%s)
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$? wall $(( $(date +%s) - t0 )) s" >>"$o/gpu-check.txt"
export LD_LIBRARY_PATH=build/cuda/bench
f='spawn_many|yield_many/1048576/64|yield_many/1048576/0|block_on_idle|chained|decision'
for r in 1 2; do
  for v in base new; do
    b=build/cuda/bench/weft_bench_device
    [ $v = base ] && b=build/base41/weft_bench_device
    timeout 60 $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
    echo "ab $v $r rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
  done
done
for r in 1 2 3; do
  for t in "runtime shutdown with requests in flight completes every waiting task with shutting_down" \
           "runtime shutdown answers requests still waiting for ring space with shutting_down"; do
    s=$(date +%s%N)
    WEFT_BACKEND=cuda timeout 60 build/cuda/tests/weft_tests "$t" >>"$o/shutdown-tests.txt" 2>&1
    echo "rc=$? $(( ($(date +%s%N) - s) / 1000000 )) ms: $t" >>"$o/shutdown-runs.txt"
  done
done
tar -czf "$OUT/s41g.tgz" -C "$OUT" s41g
