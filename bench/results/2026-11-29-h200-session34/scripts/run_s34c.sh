#!/usr/bin/env bash
# Session 34, call c: the build whose in-place wait also looks at its round's probe on a match (and spends
# the trip's budget when it saw other work), besides the look after the first unmatched poll:
# the promptness test 3 times (-s), the in-place reclaim test twice, the promptness test on the tree as
# found (83304cc: build/base/weft_tests_inplace, test_in_place.cpp alone) twice, then scripts/gpu-check.
set -u
o=$OUT/s34c
mkdir -p "$o"
t0=$(date +%s)
name="a task pinned to a warp whose task keeps waking its partner in place*"
for r in 1 2 3; do
  WEFT_BACKEND=cuda timeout 60 build/cuda/tests/weft_tests -s "$name" >"$o/prompt-$r.txt" 2>&1
  echo "rc=$?" >>"$o/prompt-$r.txt"
done
for r in 1 2; do
  WEFT_BACKEND=cuda timeout 60 build/base/weft_tests_inplace -s "$name" >"$o/teeth-$r.txt" 2>&1
  echo "rc=$?" >>"$o/teeth-$r.txt"
done
name2="frames cached by warps whose tasks keep waking each other in place*"
for r in 1 2; do
  WEFT_BACKEND=cuda timeout 60 build/cuda/tests/weft_tests -s "$name2" >"$o/inplace-$r.txt" 2>&1
  echo "rc=$?" >>"$o/inplace-$r.txt"
done
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$?" >>"$o/gpu-check.txt"
echo "wall $(( $(date +%s) - t0 )) s" >>"$o/gpu-check.txt"
tar -czf "$OUT/s34c.tgz" -C "$OUT" s34c && rm -rf "$o"
