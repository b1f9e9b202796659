#!/usr/bin/env bash
# Session 40, call c: scripts/gpu-bench on call b's build (e3, the landed device code), then one more A/B round of
# base, e2, e3 and old85 (weft_bench_device, as in run_s40b.sh). Carries build/carry/s40b.tar.xz.
set -u
o=$OUT/s40c
mkdir -p "$o"
tar -xJf build/carry/s40b.tar.xz
t0=$(date +%s)
OUT=$o/bench timeout 150 bash scripts/gpu-bench >"$o/gpu-bench.log" 2>&1
echo "gpu-bench rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
export LD_LIBRARY_PATH=build/cuda/bench
f='spawn_many|yield_many/1048576/64|yield_many/1048576/0|block_on_idle'
for v in base e2 e3 old85; do
  b=build/$v/weft_bench_device
  [ $v = base ] && b=build/bis/6b0ce90/weft_bench_device
  [ $v = e3 ] && b=build/cuda/bench/weft_bench_device
  timeout 40 $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-3.json" \
    --benchmark_out_format=json >"$o/ab-$v-3.txt" 2>&1
  echo "ab $v 3 rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
done
tar -czf "$OUT/s40c.tgz" -C "$OUT" s40c && rm -rf "$o"
