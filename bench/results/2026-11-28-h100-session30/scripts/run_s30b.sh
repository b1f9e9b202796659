#!/usr/bin/env bash
# Session 30, call b: scripts/gpu-bench on 717d48f's build (new), then new against 4ad3bb6's
# build (base: build/base/weft_bench_device) in alternating processes, two rounds.
set -u
o=$OUT/s30b
mkdir -p "$o"
OUT=$o/bench bash scripts/gpu-bench >"$o/gpu-bench.log" 2>&1
export LD_LIBRARY_PATH=build/cuda/bench
f='spawn_many|yield_many/1048576/64|chained|decision|ping_pong_pinned'
for r in 1 2; do
  for v in base new; do
    b=build/cuda/bench/weft_bench_device; [ $v = base ] && b=build/base/weft_bench_device
    $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
  done
done
tar -czf "$OUT/s30b.tgz" -C "$OUT" s30b && rm -rf "$o"
