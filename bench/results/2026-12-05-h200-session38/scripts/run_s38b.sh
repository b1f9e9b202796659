#!/usr/bin/env bash
# Session 38, call b: A/B, old (85fb491's device code, session 37's final: build/old85) against
# the final build, one process each, alternating, 3 rounds.
set -u
o=$OUT/s38b
mkdir -p "$o"
export LD_LIBRARY_PATH=build/cuda/bench
f='spawn_many|yield_many/1048576/64|yield_many/1048576/0|ping_pong|pinned_parked_wake|chained_bulk|dependent_decision|one_task_trip|block_on_idle|idle_cost'
for r in 1 2 3; do
  for v in old new; do
    b=build/old85/weft_bench_device; [ $v = new ] && b=build/cuda/bench/weft_bench_device
    timeout 240 $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
  done
done
tar -czf "$OUT/s38b.tgz" -C "$OUT" s38b && rm -rf "$o"
