#!/usr/bin/env bash
# Session 40, call a. The build: HEAD + session 39's patches/e1.patch (destroy_frame_and_chain looks at `current`
# only and walks a chain out of line; unwind_chain out of line) + step 4's teardown lists allocated at kernel start
# (and a test that fills the GPU before shutdown). 1. scripts/gpu-check on it. 2. The A/B of session 39's call d:
# weft_bench_device of 6b0ce90 (base: the device code of session 39's call a), this build (e1), HEAD + e2.patch
# (e2), 85fb491 (old85), one process each, alternating, 3 rounds.
# Pack: tar -cJf build/carry/s40a.tar.xz build/cuda/tests/weft_tests build/cuda/tests/weft_device_smoke \
#   build/cuda/examples/saxpy build/cuda/examples/file_pipeline build/cuda/bench/weft_bench_{device,io,net} \
#   build/cuda/bench/libbenchmark.so.1debian build/e2/weft_bench_device build/bis/6b0ce90 build/old85/weft_bench_device
set -u
o=$OUT/s40a
mkdir -p "$o"
tar -xJf build/carry/s40a.tar.xz
nvidia-smi >"$o/nvidia-smi.txt" 2>&1
t0=$(date +%s)
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$? wall $(( $(date +%s) - t0 )) s" >>"$o/gpu-check.txt"
WEFT_BACKEND=cuda timeout 60 build/cuda/tests/weft_tests -w NoTests -s "a runtime shuts down on a GPU filled*" \
  >"$o/fill-test.txt" 2>&1
echo "fill test rc=$?" >>"$o/fill-test.txt"
export LD_LIBRARY_PATH=build/cuda/bench
f='spawn_many|yield_many/1048576/64|yield_many/1048576/0|block_on_idle'
for r in 1 2 3; do
  for v in base e1 e2 old85; do
    b=build/bis/6b0ce90/weft_bench_device
    [ $v = e1 ] && b=build/cuda/bench/weft_bench_device
    [ $v = e2 ] && b=build/e2/weft_bench_device
    [ $v = old85 ] && b=build/old85/weft_bench_device
    timeout 40 $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
    echo "ab $v $r rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/gpu-check.txt"
  done
done
tar -czf "$OUT/s40a.tgz" -C "$OUT" s40a && rm -rf "$o"
