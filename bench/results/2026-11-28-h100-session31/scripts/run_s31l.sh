#!/usr/bin/env bash
# Session 31, call l: the host's wait for a root (device_runtime::wait) spins 200 us before it sleeps
# (new), against w0cap (call k's new build: it slept 2 us, ~55 us on Linux, after 2,048 checks);
# BM_block_on_idle and the benchmarks whose timings hold a block_on; alternating, two rounds.
set -u
o=$OUT/s31l
mkdir -p "$o"
export LD_LIBRARY_PATH=build/cuda/bench
f='block_on_idle|pinned_first_wake|one_task_trip'
for r in 1 2; do
  for v in w0cap new; do
    b=build/cuda/bench/weft_bench_device; [ $v != new ] && b=build/$v/weft_bench_device
    $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
  done
done
tar -czf "$OUT/s31l.tgz" -C "$OUT" s31l && rm -rf "$o"
