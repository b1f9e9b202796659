#!/usr/bin/env bash
# Session 45, call b: deferred spawns of the leaves' tiny tasks (WEFT_EXP_DEFER = 1: build/defer45) against the
# device code of f9d9cb4 (build/base45), alternating processes, 2 rounds.
# defer2_: also the internal nodes' left halves deferred (WEFT_EXP_DEFER_TREE: build/defer2_45).
# Pack: tar -cJf build/carry/s45b.tar.xz build/base45/weft_bench_device build/defer45/weft_bench_device build/defer2_45/weft_bench_device \
#   build/cuda/bench/libbenchmark.so.1debian
set -u
o=$OUT/s45b
mkdir -p "$o"
tar -xJf build/carry/s45b.tar.xz
t0=$(date +%s)
export LD_LIBRARY_PATH=build/cuda/bench
f=${FILTER:-'spawn_many|yield_many|chained|ping_pong_pinned|decision'}
for r in 1 2; do
  for v in base defer defer2_; do
    b=build/${v}45/weft_bench_device
    timeout 90 $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
    echo "ab $v $r rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
  done
done
tar -czf "$OUT/s45b.tgz" -C "$OUT" s45b
