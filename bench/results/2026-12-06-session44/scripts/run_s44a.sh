#!/usr/bin/env bash
# Session 44, call a: 1. the ITS overlap probe (bench/experiments/its_overlap); 2. weft_bench_device A/B, alternating,
# 2 rounds: new = b51c8a0 + steal_min (build/cuda), refill = new + lane refill (patches/refill.patch, build/refill44).
# Pack: tar -cJf build/carry/s44a.tar.xz build/cuda/bench/weft_bench_device build/cuda/bench/libbenchmark.so.1debian \
#   build/its_overlap build/refill44/weft_bench_device
set -u
o=$OUT/s44a
mkdir -p "$o"
tar -xJf build/carry/s44a.tar.xz
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$o/gpu.txt" 2>&1
timeout 60 build/its_overlap 4096 >"$o/its_overlap.txt" 2>&1
echo "its_overlap rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
export LD_LIBRARY_PATH=build/cuda/bench
f='spawn_many|yield_many|chained|block_on_idle|decision|ping_pong'
for r in 1 2; do
  for v in new refill; do
    case $v in new) b=build/cuda/bench/weft_bench_device ;; refill) b=build/refill44/weft_bench_device ;; esac
    timeout 90 $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
    echo "ab $v $r rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
  done
done
tar -czf "$OUT/s44a.tgz" -C "$OUT" s44a
