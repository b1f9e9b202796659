#!/usr/bin/env bash
# Session 43, call e, on the final device code (bfc512a + task::entered_): 1. scripts/gpu-check; 2. scripts/gpu-bench
# (device benchmarks); 3. weft_bench_device A/B against cf38b23 (build/base43), alternating, 2 rounds, with a third
# build, steal: thieves leave rings of fewer than 4 tasks to their owners (a worktree build, build/steal43).
# Pack: tar -cJf build/carry/s43e.tar.xz build/cuda/tests/weft_tests build/cuda/tests/weft_device_smoke \
#   build/cuda/examples/saxpy build/cuda/examples/file_pipeline build/cuda/bench/weft_bench_device \
#   build/cuda/bench/libbenchmark.so.1debian build/base43/weft_bench_device build/steal43/weft_bench_device
set -u
o=$OUT/s43e
mkdir -p "$o"
tar -xJf build/carry/s43e.tar.xz
t0=$(date +%s)
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
OUT=$o/bench timeout 200 bash scripts/gpu-bench >"$o/gpu-bench.log" 2>&1
echo "gpu-bench rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
export LD_LIBRARY_PATH=build/cuda/bench
f='spawn_many|yield_many|chained|block_on_idle|decision|ping_pong'
for r in 1 2; do
  for v in base new steal; do
    case $v in base) b=build/base43/weft_bench_device ;; new) b=build/cuda/bench/weft_bench_device ;; steal) b=build/steal43/weft_bench_device ;; esac
    timeout 90 $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
    echo "ab $v $r rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
  done
done
tar -czf "$OUT/s43e.tgz" -C "$OUT" s43e
