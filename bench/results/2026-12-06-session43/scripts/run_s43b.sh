#!/usr/bin/env bash
# Session 43, call b: try_begin_search without its CAS loop (relaxed fetch_add, undone on overshoot; end_search
# relaxed). 1. weft_bench_device A/B against base (cf38b23's device code, build/base43), one process each,
# alternating, 3 rounds; 2. scripts/gpu-check on the new build.
# Pack: tar -cJf build/carry/s43b.tar.xz build/cuda/tests/weft_tests build/cuda/tests/weft_device_smoke \
#   build/cuda/examples/saxpy build/cuda/examples/file_pipeline build/cuda/bench/weft_bench_device \
#   build/cuda/bench/libbenchmark.so.1debian build/base43/weft_bench_device
set -u
o=$OUT/s43b
mkdir -p "$o"
tar -xJf build/carry/s43b.tar.xz
t0=$(date +%s)
export LD_LIBRARY_PATH=build/cuda/bench
f='spawn_many|yield_many|ping_pong|chained|decision|block_on_idle'
for r in 1 2 3; do
  for v in base new; do
    b=build/cuda/bench/weft_bench_device
    [ $v = base ] && b=build/base43/weft_bench_device
    timeout 90 $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
    echo "ab $v $r rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
  done
done
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
tar -czf "$OUT/s43b.tgz" -C "$OUT" s43b
