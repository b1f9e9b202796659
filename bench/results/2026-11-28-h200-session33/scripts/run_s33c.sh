#!/usr/bin/env bash
# Session 33, call c: where ping_pong_pinned's ~18 us tail comes from. new = the session's build
# (with the tail counters), vbud = new with word_wait_cost 1 (1,024 in-place waits per trip
# instead of 16, so the coop budget almost never parks a waiter); alternating, 3 rounds.
set -u
o=$OUT/s33c
mkdir -p "$o"
export LD_LIBRARY_PATH=build/cuda/bench
f='ping_pong_pinned|pinned_parked_wake'
for r in 1 2 3; do
  for v in new vbud; do
    b=build/cuda/bench/weft_bench_device; [ $v != new ] && b=build/$v/weft_bench_device
    $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
  done
done
tar -czf "$OUT/s33c.tgz" -C "$OUT" s33c && rm -rf "$o"
