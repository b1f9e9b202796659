#!/usr/bin/env bash
# Session 37, call f: A/B, b41 (41ad535's device code: session 36's final build, kept in
# build/b41) against cce5258, one process each, alternating, 3 rounds; then scripts/gpu-bench
# on cce5258 (with weft_bench_io and weft_bench_net).
set -u
o=$OUT/s37f
mkdir -p "$o"
export LD_LIBRARY_PATH=build/cuda/bench
f='spawn_many|yield_many/1048576/64|yield_many/1048576/0|ping_pong|pinned_parked_wake|chained_bulk|dependent_decision|one_task_trip|block_on_idle'
for r in 1 2 3; do
  for v in b41 new; do
    b=build/$v/weft_bench_device; [ $v = new ] && b=build/cuda/bench/weft_bench_device
    timeout 200 $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
  done
done
OUT=$o/bench bash scripts/gpu-bench >"$o/gpu-bench.log" 2>&1
tar -czf "$OUT/s37f.tgz" -C "$OUT" s37f && rm -rf "$o"
