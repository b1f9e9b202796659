#!/usr/bin/env bash
# Session 34, call f: base (83304cc), nm (the candidate without the look at a match) and new (call e's build), alternating,
# 3 rounds on the benchmarks an in-place wait touches and spawn_many; then scripts/gpu-bench on new.
set -u
o=$OUT/s34f
mkdir -p "$o"
export LD_LIBRARY_PATH=build/cuda/bench
f='yield_many/1048576/64|spawn_many|ping_pong|pinned_parked_wake|pinned_first_wake|chained_bulk'
for r in 1 2 3; do
  for v in base nm new; do
    b=build/$v/weft_bench_device; [ $v = new ] && b=build/cuda/bench/weft_bench_device
    $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
  done
done
OUT=$o/bench bash scripts/gpu-bench >"$o/gpu-bench.log" 2>&1
tar -czf "$OUT/s34f.tgz" -C "$OUT" s34f && rm -rf "$o"
