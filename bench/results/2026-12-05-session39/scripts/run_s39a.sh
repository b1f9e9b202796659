#!/usr/bin/env bash
# Session 39, call a: scripts/gpu-check on this session's build (session 38's device changes, never run on a GPU
# before, plus this session's reactor, io and channel fixes), then session 38's new tests three more times each,
# then the A/B of session 38 (85fb491's bench, build/old85, against this build), 2 rounds, alternating.
# The suite is carried as build/carry/s39a.tar.xz (~46 MB unpacked), unpacked into build/cuda first.
set -u
o=$OUT/s39a
mkdir -p "$o"
tar -xJf build/carry/s39a.tar.xz
nvidia-smi >"$o/nvidia-smi.txt" 2>&1
t0=$(date +%s)
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$? wall $(( $(date +%s) - t0 )) s" >>"$o/gpu-check.txt"
for r in 1 2 3; do
  for t in "warps with no chunk left to take nap*" "shutdown destroys a parked await chain*" \
           "a host handle that outlives its runtime*" "a join handle joined twice*" \
           "a runtime whose teardown on the GPU fails*" "a host function that calls block_on*"; do
    WEFT_BACKEND=cuda timeout 60 build/cuda/tests/weft_tests -w NoTests -s "$t" 2>&1 | grep -E "parks per|passed|failed|FAILED" | head -4 >>"$o/new-tests-$r.txt"
    echo "rc=${PIPESTATUS[0]} : $t" >>"$o/new-tests-$r.txt"
  done
done
echo "tests done at $(( $(date +%s) - t0 )) s" >>"$o/gpu-check.txt"
export LD_LIBRARY_PATH=build/cuda/bench
f='spawn_many|yield_many/1048576/64|yield_many/1048576/0|ping_pong|pinned_parked_wake|chained_bulk|dependent_decision|one_task_trip|block_on_idle|idle_cost'
for r in 1 2; do
  for v in old new; do
    b=build/old85/weft_bench_device; [ $v = new ] && b=build/cuda/bench/weft_bench_device
    timeout 100 $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
    echo "ab $v $r rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/gpu-check.txt"
  done
done
tar -czf "$OUT/s39a.tgz" -C "$OUT" s39a && rm -rf "$o"
