#!/usr/bin/env bash
# Session 31, call i: the final code with config::park_max_ns 10 us by default (was 100 us): the new
# pinned test alone (-s), the [pinned] tests 3 times, then scripts/gpu-check.
set -u
o=$OUT/s31i
mkdir -p "$o"
WEFT_BACKEND=cuda timeout 100 build/cuda/tests/weft_tests -s "a worker counts the pinned tasks*" >"$o/pinned-count.txt" 2>&1
echo "rc=$?" >>"$o/pinned-count.txt"
for r in 1 2 3; do
  WEFT_BACKEND=cuda timeout 200 build/cuda/tests/weft_tests "[pinned]" >"$o/pinned-$r.txt" 2>&1
  echo "rc=$?" >>"$o/pinned-$r.txt"
done
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$?" >>"$o/gpu-check.txt"
tar -czf "$OUT/s31i.tgz" -C "$OUT" s31i && rm -rf "$o"
