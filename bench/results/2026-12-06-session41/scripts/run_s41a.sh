#!/usr/bin/env bash
# Session 41, call a: A/B of deferred spawns (run.hpp, "Deferred spawns"; first build, before
# the queue_full fix of device_defer_root, which the benchmarks never reach) against base (the
# landed device code of 8004638: session 40's call-b build, e3). One process per binary,
# alternating, 2 rounds. Carries build/carry/s41a.tar.xz (build/base41/weft_bench_device,
# build/cuda/bench/weft_bench_device, build/cuda/bench/libbenchmark.so.1debian).
set -u
o=$OUT/s41a
mkdir -p "$o"
tar -xJf build/carry/s41a.tar.xz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >"$o/gpu.txt" 2>&1
export LD_LIBRARY_PATH=build/cuda/bench
f='spawn_many|yield_many/1048576/64|yield_many/1048576/0|block_on_idle|one_task_trip/0|chained|decision|ping_pong_pinned/1000'
t0=$(date +%s)
for r in 1 2; do
  for v in base new; do
    b=build/cuda/bench/weft_bench_device
    [ $v = base ] && b=build/base41/weft_bench_device
    timeout 60 $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
    echo "ab $v $r rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
  done
done
