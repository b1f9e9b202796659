#!/usr/bin/env bash
# Session 35, call a: base (1129bc4's device code, this session's bench) against new
# (worker 0 naps at most 1 us and polls the host with one PCIe round trip; no look round
# after a nap that ended on staged work), alternating, 3 rounds.
set -u
o=$OUT/s35a
mkdir -p "$o"
export LD_LIBRARY_PATH=build/cuda/bench
nvidia-smi -q | grep -E "Product Name|Driver Version|SM  |Serial" >"$o/gpu.txt" 2>&1
f='block_on_idle|pinned_first_wake|pinned_parked_wake|idle_cost|spawn_many|yield_many/1048576/64|ping_pong_pinned|chained_bulk|one_task_trip'
for r in 1 2 3; do
  for v in base new; do
    b=build/$v/weft_bench_device; [ $v = new ] && b=build/cuda/bench/weft_bench_device
    $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
  done
done
tar -czf "$OUT/s35a.tgz" -C "$OUT" s35a && rm -rf "$o"
