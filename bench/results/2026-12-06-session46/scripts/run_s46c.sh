#!/usr/bin/env bash
# Session 46, call c: the A/B/C of run_s46b.sh alone (no gpu-check): base46 = 90f7f0c's device code;
# grp46 = weft::spawn_group as landed (a child's frame made in the worker loop); grp2_46 = made in
# run_and_settle instead (patches/group-v2.patch). Alternating processes, ROUNDS rounds.
# Pack: tar -cJf build/carry/s46c.tar.xz build/base46/weft_bench_device build/grp46/weft_bench_device \
#   build/grp2_46/weft_bench_device build/cuda/bench/libbenchmark.so.1debian
set -u
o=$OUT/s46c
mkdir -p "$o"
tar -xJf build/carry/s46c.tar.xz
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv >"$o/gpu.txt" 2>&1
t0=$(date +%s)
export LD_LIBRARY_PATH=build/cuda/bench
f=${FILTER:-'spawn_many|yield_many|chained|ping_pong_pinned'}
for r in $(seq 1 ${ROUNDS:-2}); do
  for v in ${VARIANTS:-base grp grp2_}; do
    b=build/${v}46/weft_bench_device
    timeout 120 $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
    echo "ab $v $r rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
  done
done
tar -czf "$OUT/s46c.tgz" -C "$OUT" s46c
