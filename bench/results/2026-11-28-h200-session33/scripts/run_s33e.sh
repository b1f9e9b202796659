#!/usr/bin/env bash
# Session 33, call e: scripts/gpu-bench on the final build (new), then base (9cfe0d1's build, the tree
# as found) against new, alternating processes, three rounds, on the benchmarks the change can touch.
set -u
o=$OUT/s33e
mkdir -p "$o"
t0=$(date +%s)
OUT=$o/bench bash scripts/gpu-bench >"$o/gpu-bench.log" 2>&1
echo "gpu-bench wall $(( $(date +%s) - t0 )) s" >>"$o/gpu-bench.log"
export LD_LIBRARY_PATH=build/cuda/bench
f='yield_many|spawn_many|ping_pong|pinned_parked_wake|one_task_trip|chained|decision'
for r in 1 2 3; do
  for v in base new; do
    b=build/cuda/bench/weft_bench_device; [ $v = base ] && b=build/base/weft_bench_device
    $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
  done
done
echo "total wall $(( $(date +%s) - t0 )) s" >>"$o/gpu-bench.log"
tar -czf "$OUT/s33e.tgz" -C "$OUT" s33e && rm -rf "$o"
