#!/usr/bin/env bash
# Session 45, call c: deferred spawns, a 40-byte record (WEFT_EXP_DEFER = 1), against the device code of f9d9cb4
# (build/base45), alternating processes, 2 rounds. d0_: the executor side only (the bench spawns as before);
# d1_: the leaves' tasks as deferred spawns (WEFT_EXP_DEFER_BENCH = 1).
# Pack: tar -cJf build/carry/s45c.tar.xz build/base45/weft_bench_device build/d0_45/weft_bench_device build/d1_45/weft_bench_device \
#   build/cuda/bench/libbenchmark.so.1debian
set -u
o=$OUT/s45c
mkdir -p "$o"
tar -xJf build/carry/s45c.tar.xz
t0=$(date +%s)
export LD_LIBRARY_PATH=build/cuda/bench
f=${FILTER:-'spawn_many|yield_many|chained|ping_pong_pinned|decision'}
for r in 1 2; do
  for v in base d0_ d1_; do
    b=build/${v}45/weft_bench_device
    timeout 90 $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
    echo "ab $v $r rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
  done
done
tar -czf "$OUT/s45c.tgz" -C "$OUT" s45c
