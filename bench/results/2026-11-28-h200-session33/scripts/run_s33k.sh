#!/usr/bin/env bash
# Session 33, call k: an in-place wait that matches looks at the other-work probe too (a helper's review:
# a ping-pong's waits matched before any look, so with 1,024 waits a trip its warp stayed out of its
# loop ~2 ms). v1 = 9c7b1fc's device code, v2 = with the look at the match; alternating, 2 rounds.
set -u
o=$OUT/s33k
mkdir -p "$o"
export LD_LIBRARY_PATH=build/cuda/bench
f='spawn_many|ping_pong_pinned'
for r in 1 2; do
  for v in v1 v2; do
    build/$v/weft_bench_device --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
  done
done
tar -czf "$OUT/s33k.tgz" -C "$OUT" s33k && rm -rf "$o"
