#!/usr/bin/env bash
# Session 28, call e: cold code out of the worker loop. cold1 = HEAD's device code with
# find_work, poll_host, publish_stats and flush_caches_if_asked out of line; cold2 = cold1
# and enqueue_from_lane's overflow loop out of line (enqueue_to_inject). b0 = HEAD; carve28
# = HEAD's code with the shared-memory carveout hint at 28 %. Three alternating rounds.
set -u
export LD_LIBRARY_PATH=build/cuda/bench
V=build/cuda/bench/variants
o=$OUT/s28e
mkdir -p "$o"
nvidia-smi >"$o/nvidia-smi.txt" 2>&1
F='one_task_trip|chained|decision|yield_many/1048576/64|yield_many/1048576/0|spawn_many|ping_pong_pinned'
for r in 1 2 3; do
  for v in b0 cold1 cold2 carve28; do
    bin=$V/$v/weft_bench_device
    env=()
    if [ "$v" = carve28 ]; then bin=$V/carve/weft_bench_device; env=(WEFT_CARVEOUT=28); fi
    env "${env[@]}" "$bin" --benchmark_filter="$F" --benchmark_out="$o/$v-$r.json" --benchmark_out_format=json \
      >"$o/$v-$r.txt" 2>&1
  done
done
tar -czf "$OUT/s28e.tgz" -C "$OUT" s28e && rm -rf "$o"
