#!/usr/bin/env bash
# Session 31, call b: scripts/gpu-bench on the new build, then new against base (8840021's
# device code with the new bench file: build/base/weft_bench_device) in alternating
# processes, two rounds.
set -u
o=$OUT/s31b
mkdir -p "$o"
OUT=$o/bench bash scripts/gpu-bench >"$o/gpu-bench.log" 2>&1
export LD_LIBRARY_PATH=build/cuda/bench
f='pinned_parked_wake|ping_pong_pinned|spawn_many|yield_many/1048576/64|chained|decision'
for r in 1 2; do
  for v in base new; do
    b=build/cuda/bench/weft_bench_device; [ $v = base ] && b=build/base/weft_bench_device
    $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
  done
done
tar -czf "$OUT/s31b.tgz" -C "$OUT" s31b && rm -rf "$o"
