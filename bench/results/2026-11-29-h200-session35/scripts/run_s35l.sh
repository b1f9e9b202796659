#!/usr/bin/env bash
# Session 35, call l: the bench after the review (pinned_echo's launch checked, its spin
# bounded at 5 s; the device code unchanged but for comments): BM_block_on_idle, 2 processes.
set -u
o=$OUT/s35l
mkdir -p "$o"
export LD_LIBRARY_PATH=build/cuda/bench
for r in 1 2; do
  build/cuda/bench/weft_bench_device --benchmark_filter='block_on_idle' --benchmark_counters_tabular=true \
    --benchmark_out="$o/ab-new-$r.json" --benchmark_out_format=json >"$o/ab-new-$r.txt" 2>&1
done
tar -czf "$OUT/s35l.tgz" -C "$OUT" s35l && rm -rf "$o"
