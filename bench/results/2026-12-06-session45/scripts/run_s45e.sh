#!/usr/bin/env bash
# Session 45, call e: the cost of a safe form of deferred spawns, probed (WEFT_EXP_DEFER = 1), against f9d9cb4
# (build/base45), alternating processes, 2 rounds. d2_: as in call d; d2pin: d2_ with the spawner counting its
# started children and each child an RMW on its spawner's finished count (patches/defer-pin.patch, built in a worktree).
# Pack: tar -cJf build/carry/s45e.tar.xz build/base45/weft_bench_device build/d2_45/weft_bench_device build/d2pin45/weft_bench_device \
#   build/cuda/bench/libbenchmark.so.1debian
set -u
o=$OUT/s45e
mkdir -p "$o"
tar -xJf build/carry/s45e.tar.xz
t0=$(date +%s)
export LD_LIBRARY_PATH=build/cuda/bench
f=${FILTER:-'spawn_many|yield_many|chained|ping_pong_pinned|decision'}
for r in ${ROUNDS:-1 2}; do
  for v in base d2_ d2pin; do
    b=build/${v}45/weft_bench_device
    timeout 90 $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
    echo "ab $v $r rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
  done
done
tar -czf "$OUT/s45e.tgz" -C "$OUT" s45e
