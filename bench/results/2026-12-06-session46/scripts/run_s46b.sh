#!/usr/bin/env bash
# Session 46, call b: 1. A/B/C, alternating processes, ROUNDS rounds: base46 = 90f7f0c's device code;
# grp46 = weft::spawn_group as landed, a child's frame made in the worker loop; grp2_46 = the same
# made in run_and_settle instead (patches/group-v2.patch, the whole diff against 90f7f0c);
# 2. scripts/gpu-check on build/cuda/tests, grp46's code (spawn_group's tests included).
# Pack: tar -cJf build/carry/s46b.tar.xz build/base46/weft_bench_device build/grp46/weft_bench_device \
#   build/grp2_46/weft_bench_device build/cuda/bench/libbenchmark.so.1debian build/cuda/tests/weft_tests build/cuda/tests/weft_device_smoke \
#   build/cuda/examples/saxpy build/cuda/examples/file_pipeline
set -u
o=$OUT/s46b
mkdir -p "$o"
tar -xJf build/carry/s46b.tar.xz
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv >"$o/gpu.txt" 2>&1
t0=$(date +%s)
export LD_LIBRARY_PATH=build/cuda/bench
f=${FILTER:-'spawn_many|yield_many|chained|ping_pong_pinned|decision'}
for r in $(seq 1 ${ROUNDS:-2}); do
  for v in ${VARIANTS:-base grp grp2_}; do
    b=build/${v}46/weft_bench_device
    timeout 120 $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
    echo "ab $v $r rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
  done
done
if [ "${CHECK:-1}" = 1 ]; then
  OUT=$o/check timeout ${CHECK_LIMIT:-380} bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
  echo "gpu-check rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
  xz -9 "$o"/check/*.log 2>/dev/null
fi
tar -czf "$OUT/s46b.tgz" -C "$OUT" s46b
