#!/usr/bin/env bash
# Session 29, call d: the join's frame ownership (spawn.hpp): scripts/gpu-check with the
# sanitizers, then the [runtime] tests twice more.
set -u
o=$OUT/s29d
mkdir -p "$o"
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$?" >>"$o/gpu-check.txt"
for r in 1 2; do
  WEFT_BACKEND=cuda timeout 200 build/cuda/tests/weft_tests "[runtime]" >"$o/runtime-$r.txt" 2>&1
  echo "rc=$?" >>"$o/runtime-$r.txt"
done
tar -czf "$OUT/s29d.tgz" -C "$OUT" s29d && rm -rf "$o"
