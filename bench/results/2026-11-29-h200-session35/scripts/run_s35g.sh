#!/usr/bin/env bash
# Session 35, call g: why pinned_first_wake read ~2 us slower. new (the final build) against
# nt (new, but worker 0's naps leave the timers to the other warps' naps: experiment only),
# alternating, 3 rounds. The benchmark's root sleeps 2 ms before each spawn_pinned; the
# warp whose nap polls the timers first wakes it.
set -u
o=$OUT/s35g
mkdir -p "$o"
export LD_LIBRARY_PATH=build/cuda/bench
f='pinned_first_wake|pinned_parked_wake|block_on_idle'
for r in 1 2 3; do
  for v in new nt; do
    b=build/$v/weft_bench_device; [ $v = new ] && b=build/cuda/bench/weft_bench_device
    $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
  done
done
tar -czf "$OUT/s35g.tgz" -C "$OUT" s35g && rm -rf "$o"
