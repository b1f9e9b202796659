#!/usr/bin/env bash
# Session 28, call b: HEAD (base) against the spawn/destroy counts in shared memory
# (stats), and HEAD's code with the worker kernel's shared-memory carveout hint at 28 %
# (carve28: ~64 KiB, what 3 blocks of ~19 KiB need) or 100 % (carve100: the most shared
# memory, the least L1), three alternating rounds; spawn_many's decomposition (leaf1:
# spawn and detach, no join; leaf2: await each tiny task inline; leaf3: no tiny tasks,
# only the tree), two rounds. Everything is packed into one tarball at the end.
set -u
export LD_LIBRARY_PATH=build/cuda/bench
B=build/cuda/bench
V=$B/variants
o=$OUT/s28b
mkdir -p "$o"
nvidia-smi >"$o/nvidia-smi.txt" 2>&1
F='one_task_trip|chained|decision|yield_many/1048576/64|yield_many/1048576/0|spawn_many|ping_pong_pinned'
run() {  # name binary [env]
  local name=$1 bin=$2
  shift 2
  env "$@" "$bin" --benchmark_filter="$F" --benchmark_out="$o/$name.json" --benchmark_out_format=json >"$o/$name.txt" 2>&1
}
for r in 1 2 3; do
  run base-$r $B/weft_bench_device
  run stats-$r $V/stats/weft_bench_device
  run carve28-$r $V/carve/weft_bench_device WEFT_CARVEOUT=28
  run carve100-$r $V/carve/weft_bench_device WEFT_CARVEOUT=100
  if [ "$r" -le 2 ]; then
    for v in leaf1 leaf2 leaf3; do
      "$V/$v/weft_bench_device" --benchmark_filter=spawn_many --benchmark_out="$o/$v-$r.json" \
        --benchmark_out_format=json >"$o/$v-$r.txt" 2>&1
    done
  fi
done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >"$o/gpu-after.txt" 2>&1
tar -czf "$OUT/s28b.tgz" -C "$OUT" s28b && rm -rf "$o"
