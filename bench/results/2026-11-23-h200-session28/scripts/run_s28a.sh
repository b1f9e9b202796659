#!/usr/bin/env bash
# Session 28, call a: HEAD (base) against the lane-cache front (front) and the front with
# the spawn/destroy counts in shared memory (front2), three alternating rounds; and
# spawn_many's decomposition (leaf1: spawn and detach, no join; leaf2: await each tiny
# task inline; leaf3: no tiny tasks at all, only the tree), two rounds.
set -u
export LD_LIBRARY_PATH=build/cuda/bench
B=build/cuda/bench
V=$B/variants
o=$OUT/s28a
mkdir -p "$o"
nvidia-smi >"$o/nvidia-smi.txt" 2>&1
F='one_task_trip|chained|decision|yield_many/1048576/64|yield_many/1048576/0|spawn_many|ping_pong_pinned'
for r in 1 2 3; do
  for v in base front front2; do
    bin=$B/weft_bench_device
    [ "$v" != base ] && bin=$V/$v/weft_bench_device
    "$bin" --benchmark_filter="$F" --benchmark_out="$o/$v-$r.json" --benchmark_out_format=json >"$o/$v-$r.txt" 2>&1
  done
  if [ "$r" -le 2 ]; then
    for v in leaf1 leaf2 leaf3; do
      "$V/$v/weft_bench_device" --benchmark_filter=spawn_many --benchmark_out="$o/$v-$r.json" \
        --benchmark_out_format=json >"$o/$v-$r.txt" 2>&1
    done
  fi
done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >"$o/gpu-after.txt" 2>&1
