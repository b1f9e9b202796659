#!/usr/bin/env bash
# Session 45, call d: deferred spawns (WEFT_EXP_DEFER = 1), against the device code of f9d9cb4
# (build/base45), alternating processes, 2 rounds. d1_: the leaves' tasks deferred (as in call c);
# d1b: d1_ with the worker's create call in a noinline function; d2_: d1_ and the tree's left halves deferred.
# Pack: tar -cJf build/carry/s45d.tar.xz build/base45/weft_bench_device build/d1_45/weft_bench_device build/d1b45/weft_bench_device build/d2_45/weft_bench_device \
#   build/cuda/bench/libbenchmark.so.1debian
set -u
o=$OUT/s45d
mkdir -p "$o"
tar -xJf build/carry/s45d.tar.xz
t0=$(date +%s)
export LD_LIBRARY_PATH=build/cuda/bench
f=${FILTER:-'spawn_many|yield_many|chained|ping_pong_pinned|decision'}
for r in 1 2; do
  for v in base d1_ d1b d2_; do
    b=build/${v}45/weft_bench_device
    timeout 90 $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
    echo "ab $v $r rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
  done
done
tar -czf "$OUT/s45d.tgz" -C "$OUT" s45d
