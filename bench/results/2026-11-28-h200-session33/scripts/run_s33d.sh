#!/usr/bin/env bash
# Session 33, call d: the final device code (1,024 in-place waits a trip; a frame-pool reclaim ends an
# in-place wait). The new in-place test 3 times, the [pinned] tests twice, then gpu-check. (The build
# whose probe does not look at the reclaim runs the new test in call f: both binaries do not fit a carry.)
set -u
o=$OUT/s33d
mkdir -p "$o"
t0=$(date +%s)
name="frames cached by warps whose tasks keep waking each other in place*"
for r in 1 2 3; do
  WEFT_BACKEND=cuda timeout 60 build/cuda/tests/weft_tests -s "$name" >"$o/inplace-new-$r.txt" 2>&1
  echo "rc=$?" >>"$o/inplace-new-$r.txt"
done
for r in 1 2; do
  WEFT_BACKEND=cuda timeout 200 build/cuda/tests/weft_tests "[pinned]" >"$o/pinned-$r.txt" 2>&1
  echo "rc=$?" >>"$o/pinned-$r.txt"
done
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$?" >>"$o/gpu-check.txt"
echo "wall $(( $(date +%s) - t0 )) s" >>"$o/gpu-check.txt"
tar -czf "$OUT/s33d.tgz" -C "$OUT" s33d && rm -rf "$o"
