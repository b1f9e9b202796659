#!/usr/bin/env bash
# Session 31, call g: the idle cost with a parked pinned task on every worker warp (every warp then
# naps at most 2 us, worker 0 20 us) beside the plain idle cost, the final code, three processes.
set -u
o=$OUT/s31g
mkdir -p "$o"
export LD_LIBRARY_PATH=build/cuda/bench
for r in 1 2 3; do
  build/cuda/bench/weft_bench_device --benchmark_filter='idle_cost' --benchmark_counters_tabular=true \
    --benchmark_out="$o/idle-$r.json" --benchmark_out_format=json >"$o/idle-$r.txt" 2>&1
done
tar -czf "$OUT/s31g.tgz" -C "$OUT" s31g && rm -rf "$o"
