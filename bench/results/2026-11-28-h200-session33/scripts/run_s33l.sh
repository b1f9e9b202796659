#!/usr/bin/env bash
# Session 33, call l: the final build (the look at the match): the new in-place test and the pinned
# promptness test 3 times each (-s), then scripts/gpu-check. (no gpu-bench: too little device time left; the
# test binary and the bench binaries do not fit one carry.)
set -u
o=$OUT/s33l
mkdir -p "$o"
t0=$(date +%s)
name="frames cached by warps whose tasks keep waking each other in place*"
for r in 1 2 3; do
  WEFT_BACKEND=cuda timeout 60 build/cuda/tests/weft_tests -s "$name" >"$o/inplace-$r.txt" 2>&1
  echo "rc=$?" >>"$o/inplace-$r.txt"
done
for r in 1 2 3; do
  WEFT_BACKEND=cuda timeout 60 build/cuda/tests/weft_tests -s "a task pinned to a warp whose tasks keep waking*" >"$o/pinned-prompt-$r.txt" 2>&1
  echo "rc=$?" >>"$o/pinned-prompt-$r.txt"
done
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$?" >>"$o/gpu-check.txt"
echo "wall $(( $(date +%s) - t0 )) s" >>"$o/gpu-check.txt"
tar -czf "$OUT/s33l.tgz" -C "$OUT" s33l && rm -rf "$o"
