#!/usr/bin/env bash
# Session 34, call j: base (83304cc) and new (call i's build), alternating,
# 2 rounds; then scripts/gpu-bench on new.
set -u
o=$OUT/s34j
mkdir -p "$o"
export LD_LIBRARY_PATH=build/cuda/bench
f='yield_many/1048576/64|spawn_many|ping_pong|pinned_parked_wake|chained_bulk|dependent'
for r in 1 2; do
  for v in base new; do
    b=build/$v/weft_bench_device; [ $v = new ] && b=build/cuda/bench/weft_bench_device
    $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
  done
done
OUT=$o/bench bash scripts/gpu-bench >"$o/gpu-bench.log" 2>&1
# (no tar: written straight under $OUT, so a call cut short still brings back what ran)
