#!/usr/bin/env bash
# Session 34, call i: after a review: event::wait's await_ready also yields on a set event while the warp owes a
# trip (device_owes_trip), the looking wait picked by inline_left % look_every with a static_assert, and the
# test also asks for the pair's rounds during the spawns. The promptness test 3 times (-s), the in-place
# reclaim test twice, then scripts/gpu-check.
set -u
o=$OUT/s34i
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
tar -czf "$OUT/s34i.tgz" -C "$OUT" s34i && rm -rf "$o"
