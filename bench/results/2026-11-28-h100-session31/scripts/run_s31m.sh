#!/usr/bin/env bash
# Session 31, call m: the final code (worker 0 naps at most min(20 us, park_max_ns); the host wait spins
# 200 us before it sleeps): the new pinned test alone (-s), the [pinned] tests 3 times, then gpu-check.
set -u
o=$OUT/s31m
mkdir -p "$o"
WEFT_BACKEND=cuda timeout 100 build/cuda/tests/weft_tests -s "a worker counts the pinned tasks*" >"$o/pinned-count.txt" 2>&1
echo "rc=$?" >>"$o/pinned-count.txt"
for r in 1 2 3; do
  WEFT_BACKEND=cuda timeout 200 build/cuda/tests/weft_tests "[pinned]" >"$o/pinned-$r.txt" 2>&1
  echo "rc=$?" >>"$o/pinned-$r.txt"
done
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$?" >>"$o/gpu-check.txt"
tar -czf "$OUT/s31m.tgz" -C "$OUT" s31m && rm -rf "$o"
