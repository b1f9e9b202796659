#!/usr/bin/env bash
# Session 44, call c, on the final device code (dc9293a + the task awaiter holding one pointer to its task):
# 1. weft_bench_device A/B, alternating, 1 round: steal = dc9293a (build/steal44), awaiter = final (build/cuda);
# 2. scripts/gpu-check; 3. scripts/gpu-bench.
# Pack: tar -cJf build/carry/s44c.tar.xz build/cuda/tests/weft_tests build/cuda/tests/weft_device_smoke \
#   build/cuda/examples/saxpy build/cuda/examples/file_pipeline build/cuda/bench/weft_bench_device \
#   build/cuda/bench/libbenchmark.so.1debian build/steal44/weft_bench_device
set -u
o=$OUT/s44c
mkdir -p "$o"
tar -xJf build/carry/s44c.tar.xz
t0=$(date +%s)
export LD_LIBRARY_PATH=build/cuda/bench
f='spawn_many|yield_many'
for r in 1; do
  for v in steal awaiter; do
    case $v in steal) b=build/steal44/weft_bench_device ;; awaiter) b=build/cuda/bench/weft_bench_device ;; esac
    timeout 60 $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
    echo "ab $v $r rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
  done
done
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
OUT=$o/bench timeout 220 bash scripts/gpu-bench >"$o/gpu-bench.log" 2>&1
echo "gpu-bench rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
xz -9 "$o"/check/*.log 2>/dev/null
tar -czf "$OUT/s44c.tgz" -C "$OUT" s44c
