#!/usr/bin/env bash
# Session 31, call f: is ping_pong_pinned's p50 ~45 ns higher with the final code (calls b, c, e)?
# base (8840021's device code), final (call e's build) and nohyb (final with the in-place
# wait's acquire-only polls of before: no acquire_poll_rounds), alternating processes, 4 rounds.
set -u
o=$OUT/s31f
mkdir -p "$o"
export LD_LIBRARY_PATH=build/cuda/bench
f='ping_pong_pinned|pinned_parked_wake'
for r in 1 2 3 4; do
  for v in base final nohyb; do
    build/$v/weft_bench_device --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
  done
done
tar -czf "$OUT/s31f.tgz" -C "$OUT" s31f && rm -rf "$o"
