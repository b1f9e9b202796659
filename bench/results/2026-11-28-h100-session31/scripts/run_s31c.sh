#!/usr/bin/env bash
# Session 31, call c: three builds in alternating processes, two rounds: base (8840021's device
# code), new1 (call b's build) and new2 (new1, and a warp whose nap a pinned wake-up ended
# stages its inbox at once: find_work's take_inbox after park_lane0).
set -u
o=$OUT/s31c
mkdir -p "$o"
export LD_LIBRARY_PATH=build/cuda/bench
f='pinned_parked_wake|ping_pong_pinned|spawn_many|yield_many/1048576/64|chained'
for r in 1 2; do
  for v in base new1 new2; do
    b=build/cuda/bench/weft_bench_device; [ $v != new2 ] && b=build/$v/weft_bench_device
    $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
  done
done
tar -czf "$OUT/s31c.tgz" -C "$OUT" s31c && rm -rf "$o"
