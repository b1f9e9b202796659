#!/usr/bin/env bash
# Session 31, call h: the longest nap, config::park_max_ns, 100 us (the default) against 10 us and
# 2 us (WEFT_BENCH_PARK_MAX_NS, for the shared runtime and the idle-cost runtimes), the final
# device code with two new benchmarks (pinned_first_wake; idle_cost_pinned_homes), alternating
# processes, three rounds.
set -u
o=$OUT/s31h
mkdir -p "$o"
export LD_LIBRARY_PATH=build/cuda/bench
f='spawn_many|yield_many/1048576/64|ping_pong_pinned|pinned_parked_wake|pinned_first_wake|chained|decision|idle_cost'
for r in 1 2 3; do
  for p in 100000 10000 2000; do
    WEFT_BENCH_PARK_MAX_NS=$p build/cuda/bench/weft_bench_device --benchmark_filter="$f" --benchmark_counters_tabular=true \
      --benchmark_out="$o/ab-p$p-$r.json" --benchmark_out_format=json >"$o/ab-p$p-$r.txt" 2>&1
  done
done
tar -czf "$OUT/s31h.tgz" -C "$OUT" s31h && rm -rf "$o"
