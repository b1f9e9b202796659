#!/usr/bin/env bash
# Session 42, call b: scripts/gpu-check on the final build (no device code changed: the GPU facts check
# refuses compute capability < 9.0, config::timer_capacity is bounded, host workers flush their frame caches when
# they sleep, host shutdown allocates nothing), then the new tests on both backends, 3 times each.
# Pack: tar -cJf build/carry/s42b.tar.xz build/cuda/tests/weft_tests build/cuda/tests/weft_device_smoke \
#   build/cuda/examples/saxpy build/cuda/examples/file_pipeline
set -u
n=${1:-s42b}
o=$OUT/$n
mkdir -p "$o"
tar -xJf build/carry/$n.tar.xz
t0=$(date +%s)
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$? wall $(( $(date +%s) - t0 )) s" >>"$o/gpu-check.txt"
for r in 1 2 3; do
  for b in cuda host; do
    for t in "a GPU below compute capability 9.0 is refused when the runtime is made*" \
             "an exec::device_runtime made directly refuses*" \
             "a configuration outside its documented bounds*" \
             "host workers that go to sleep give their cached frames back*" \
             "shutdown destroys parked tasks that own tiny objects*" \
             "destroying the runtime with tasks still suspended*" \
             "shutdown destroys a task that holds its own join handle*" \
             "shutdown destroys tasks parked on a semaphore*" \
             "shutdown destroys a task holding a mutex guard*" \
             "frames cached by the lanes that freed them come back*"; do
      WEFT_BACKEND=$b timeout 120 build/cuda/tests/weft_tests "$t" >>"$o/new-tests.txt" 2>&1
      echo "rc=$? $b: $t" >>"$o/new-tests-runs.txt"
    done
  done
done
tar -czf "$OUT/$n.tgz" -C "$OUT" "$n"
