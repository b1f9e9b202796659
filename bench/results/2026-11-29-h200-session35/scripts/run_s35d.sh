#!/usr/bin/env bash
# Session 35, call d: base (1129bc4's device code, this session's bench), new (call a's
# change; poll_host reads the next slot's seq as a hint before it creates the root; a
# nap's words all loaded before any is tested; a nap that ended on staged work returns at
# once; stack 240 B) and v2 (new without the nap's loads-first loop; stack 208 B),
# alternating, 3 rounds. (Call c's build, with the slot copied in one round, is gone.)
set -u
o=$OUT/s35d
mkdir -p "$o"
export LD_LIBRARY_PATH=build/cuda/bench
nvidia-smi -q | grep -E "Product Name|Driver Version|SM  |Serial" >"$o/gpu.txt" 2>&1
f='block_on_idle|pinned_first_wake|pinned_parked_wake|idle_cost|spawn_many|yield_many/1048576/64|ping_pong_pinned|chained_bulk|one_task_trip'
for r in 1 2 3; do
  for v in base new v2; do
    b=build/$v/weft_bench_device; [ $v = new ] && b=build/cuda/bench/weft_bench_device
    $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
  done
done
tar -czf "$OUT/s35d.tgz" -C "$OUT" s35d && rm -rf "$o"
