#!/usr/bin/env bash
# Session 33, call i: the final build (the tree committed after this session): the new in-place test 3
# times (-s), then scripts/gpu-check. (scripts/gpu-bench on the same build: call j, run_s33j.sh; the
# test binary and the bench binaries do not fit one carry.)
set -u
o=$OUT/s33i
mkdir -p "$o"
t0=$(date +%s)
name="frames cached by warps whose tasks keep waking each other in place*"
for r in 1 2 3; do
  WEFT_BACKEND=cuda timeout 60 build/cuda/tests/weft_tests -s "$name" >"$o/inplace-$r.txt" 2>&1
  echo "rc=$?" >>"$o/inplace-$r.txt"
done
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$?" >>"$o/gpu-check.txt"
echo "wall $(( $(date +%s) - t0 )) s" >>"$o/gpu-check.txt"
tar -czf "$OUT/s33i.tgz" -C "$OUT" s33i && rm -rf "$o"
