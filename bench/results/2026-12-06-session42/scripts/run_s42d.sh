#!/usr/bin/env bash
# Session 42, call d: the two tests added after call b (a9f37bc), 3 times each on the GPU machine: the default
# runtime with WEFT_BACKEND unset (it must pick cuda on this GPU) and io::open's default mode on both backends;
# then the whole suite once more with WEFT_BACKEND=cuda (as gpu-check's step 2).
# Pack: tar -cJf build/carry/s42d.tar.xz build/cuda/tests/weft_tests
set -u
o=$OUT/s42d
mkdir -p "$o"
tar -xJf build/carry/s42d.tar.xz
for r in 1 2 3; do
  env -u WEFT_BACKEND timeout 120 build/cuda/tests/weft_tests "a runtime made with no configuration*" -s >>"$o/default.txt" 2>&1
  echo "rc=$? default" >>"$o/runs.txt"
  for b in cuda host; do
    WEFT_BACKEND=$b timeout 120 build/cuda/tests/weft_tests "io::open creates a file with mode 0644*" >>"$o/mode.txt" 2>&1
    echo "rc=$? $b mode" >>"$o/runs.txt"
  done
done
WEFT_BACKEND=cuda timeout 600 build/cuda/tests/weft_tests -d yes "~[fault]~[cross_tu]~[apart]~[multi_gpu]" >"$o/suite.txt" 2>&1
echo "rc=$? suite" >>"$o/runs.txt"
grep -E "test cases|passed|failed" "$o/suite.txt" | tail -3 >>"$o/runs.txt"
tar -czf "$OUT/s42d.tgz" -C "$OUT" s42d
