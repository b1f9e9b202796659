#!/usr/bin/env bash
# Session 41, call b: A/B of base (8004638's device code, session 40's call-b build), v1 (call a's
# deferred spawns) and v2 (v1 with 4-byte slots, in place only when the whole batch is at the
# join, the parked-warp look every 8th trip); then scripts/gpu-bench on the base build (the landed
# device code; session 40 left it unrun). Carries build/carry/s41b.tar.xz (build/base41,
# build/v1, v2 as build/cuda/bench/weft_bench_device) and build/carry/s40b.tar.xz (the base build
# with weft_bench_io and weft_bench_net, extracted last).
set -u
o=$OUT/s41b
mkdir -p "$o"
tar -xJf build/carry/s41b.tar.xz
export LD_LIBRARY_PATH=build/cuda/bench
f='spawn_many|yield_many/1048576/64|yield_many/1048576/0'
t0=$(date +%s)
for r in 1 2; do
  for v in base v1 v2; do
    b=build/cuda/bench/weft_bench_device
    [ $v = base ] && b=build/base41/weft_bench_device
    [ $v = v1 ] && b=build/v1/weft_bench_device
    timeout 40 $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
    echo "ab $v $r rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
  done
done
tar -xJf build/carry/s40b.tar.xz
OUT=$o/bench timeout 200 bash scripts/gpu-bench >"$o/gpu-bench.log" 2>&1
echo "gpu-bench rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
tar -czf "$OUT/s41b.tgz" -C "$OUT" s41b
