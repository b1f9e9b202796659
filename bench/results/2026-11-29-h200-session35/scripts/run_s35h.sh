#!/usr/bin/env bash
# Session 35, call h: which change costs pinned_first_wake ~2 us (call g rejected the
# timers). base (1129bc4's device code), c1 (base with worker 0's nap cap at 1 us, nothing
# else), c2 (the final build without find_work's staged-count check after a nap), new
# (the final build), alternating, 3 rounds.
set -u
o=$OUT/s35h
mkdir -p "$o"
export LD_LIBRARY_PATH=build/cuda/bench
f='pinned_first_wake|pinned_parked_wake|block_on_idle'
for r in 1 2 3; do
  for v in base c1 c2 new; do
    b=build/$v/weft_bench_device; [ $v = new ] && b=build/cuda/bench/weft_bench_device
    $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
  done
done
tar -czf "$OUT/s35h.tgz" -C "$OUT" s35h && rm -rf "$o"
