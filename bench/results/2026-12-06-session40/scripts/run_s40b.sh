#!/usr/bin/env bash
# Session 40, call b. The build: HEAD + e3 (session 39's e2.patch - destroy_frame_and_chain looks at `current` only -
# with run_task's unwind and the chain walk marked [[unlikely]]) + step 4's teardown lists allocated at kernel start
# + the tightened and new tests of helper 27. 1. scripts/gpu-check on it. 2. weft_bench_device A/B, one process
# each, alternating, 2 rounds: base (6b0ce90, session 39's device code), e2 (HEAD + e2.patch), e3 (this build),
# e4 (e3 with 85fb491's unwind_chain: no destroys; a diagnostic, wrong on failure), e5 (e3 without the
# already_taken checks and enter_child's owner_slot store; a diagnostic), old85 (85fb491).
# Pack: tar -cJf build/carry/s40b.tar.xz build/cuda/tests/weft_tests build/cuda/tests/weft_device_smoke \
#   build/cuda/examples/saxpy build/cuda/examples/file_pipeline build/cuda/bench/weft_bench_{device,io,net} \
#   build/cuda/bench/libbenchmark.so.1debian build/e2 build/e4 build/e5 build/bis/6b0ce90 build/old85/weft_bench_device
set -u
o=$OUT/s40b
mkdir -p "$o"
tar -xJf build/carry/s40b.tar.xz
nvidia-smi >"$o/nvidia-smi.txt" 2>&1
t0=$(date +%s)
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$? wall $(( $(date +%s) - t0 )) s" >>"$o/gpu-check.txt"
export LD_LIBRARY_PATH=build/cuda/bench
f='spawn_many|yield_many/1048576/64|yield_many/1048576/0|block_on_idle'
for r in 1 2; do
  for v in base e2 e3 e4 e5 old85; do
    b=build/$v/weft_bench_device
    [ $v = base ] && b=build/bis/6b0ce90/weft_bench_device
    [ $v = e3 ] && b=build/cuda/bench/weft_bench_device
    timeout 40 $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
    echo "ab $v $r rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/gpu-check.txt"
  done
done
tar -czf "$OUT/s40b.tgz" -C "$OUT" s40b && rm -rf "$o"
