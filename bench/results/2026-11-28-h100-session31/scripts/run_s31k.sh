#!/usr/bin/env bash
# Session 31, call k: worker 0's nap capped at min(20 us, park_max_ns) (new) against 20 us always
# (w0base: 401c25f's device code), both with the new BM_block_on_idle; alternating processes,
# two rounds.
set -u
o=$OUT/s31k
mkdir -p "$o"
export LD_LIBRARY_PATH=build/cuda/bench
f='block_on_idle|pinned_first_wake|ping_pong_pinned|chained|decision|spawn_many|yield_many/1048576/64|idle_cost/'
for r in 1 2; do
  for v in w0base new; do
    b=build/cuda/bench/weft_bench_device; [ $v = w0base ] && b=build/w0base/weft_bench_device
    $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
  done
done
tar -czf "$OUT/s31k.tgz" -C "$OUT" s31k && rm -rf "$o"
