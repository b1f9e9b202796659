#!/usr/bin/env bash
# Session 35, call j: base (1129bc4's device code, this session's bench) against the final
# build (call i's), alternating, 3 rounds; then scripts/gpu-bench on the final build.
set -u
o=$OUT/s35j
mkdir -p "$o"
export LD_LIBRARY_PATH=build/cuda/bench
f='block_on_idle|pinned_first_wake|pinned_parked_wake|idle_cost|spawn_many|yield_many/1048576/64|ping_pong|chained_bulk|dependent_decision|one_task_trip'
for r in 1 2 3; do
  for v in base new; do
    b=build/$v/weft_bench_device; [ $v = new ] && b=build/cuda/bench/weft_bench_device
    $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
  done
done
OUT=$o/bench bash scripts/gpu-bench >"$o/gpu-bench.log" 2>&1
tar -czf "$OUT/s35j.tgz" -C "$OUT" s35j && rm -rf "$o"
