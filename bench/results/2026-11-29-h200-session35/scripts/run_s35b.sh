#!/usr/bin/env bash
# Session 35, call b: where block_on's round trip on an idle runtime goes. dbg = new plus
# %globaltimer stamps (experiment only: poll_host's match, the root created, the root's
# body start and end, the completion written), 3 processes.
set -u
o=$OUT/s35b
mkdir -p "$o"
export LD_LIBRARY_PATH=build/cuda/bench
for r in 1 2 3; do
  build/dbg/weft_bench_device --benchmark_filter='block_on_idle' --benchmark_counters_tabular=true \
    --benchmark_out="$o/ab-dbg-$r.json" --benchmark_out_format=json >"$o/ab-dbg-$r.txt" 2>&1
done
tar -czf "$OUT/s35b.tgz" -C "$OUT" s35b && rm -rf "$o"
