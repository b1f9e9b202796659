#!/usr/bin/env bash
# Session 35, call k: pinned_first_wake measured also from the sleep's deadline (the bench
# now reports when the spawner ran and when the pinned task started, both after the
# deadline). base (1129bc4's device code) against the final build, alternating, 3 rounds.
set -u
o=$OUT/s35k
mkdir -p "$o"
export LD_LIBRARY_PATH=build/cuda/bench
f='pinned_first_wake|block_on_idle'
for r in 1 2 3; do
  for v in base new; do
    b=build/$v/weft_bench_device; [ $v = new ] && b=build/cuda/bench/weft_bench_device
    $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
  done
done
tar -czf "$OUT/s35k.tgz" -C "$OUT" s35k && rm -rf "$o"
