#!/usr/bin/env bash
# Session 34, call a: the build with the in-place wait's look after its first unmatched poll (device_hooks.hpp):
# the new promptness test 3 times (-s) and the in-place reclaim test twice, then scripts/gpu-check.
set -u
o=$OUT/s34a
mkdir -p "$o"
t0=$(date +%s)
name="a task pinned to a warp whose task keeps waking its partner in place*"
for r in 1 2 3; do
  WEFT_BACKEND=cuda timeout 60 build/cuda/tests/weft_tests -s "$name" >"$o/prompt-$r.txt" 2>&1
  echo "rc=$?" >>"$o/prompt-$r.txt"
done
name2="frames cached by warps whose tasks keep waking each other in place*"
for r in 1 2; do
  WEFT_BACKEND=cuda timeout 60 build/cuda/tests/weft_tests -s "$name2" >"$o/inplace-$r.txt" 2>&1
  echo "rc=$?" >>"$o/inplace-$r.txt"
done
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$?" >>"$o/gpu-check.txt"
echo "wall $(( $(date +%s) - t0 )) s" >>"$o/gpu-check.txt"
tar -czf "$OUT/s34a.tgz" -C "$OUT" s34a && rm -rf "$o"
