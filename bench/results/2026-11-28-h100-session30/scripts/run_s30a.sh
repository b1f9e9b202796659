#!/usr/bin/env bash
# Session 30, call a: 717d48f's build (one wake RMW; rt.workers() 0 after a failed start):
# scripts/gpu-check with the sanitizers, then the new failed-start test alone (-s), and
# the [pinned] tests once more.
set -u
o=$OUT/s30a
mkdir -p "$o"
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$?" >>"$o/gpu-check.txt"
WEFT_BACKEND=cuda timeout 100 build/cuda/tests/weft_tests -s "a cuda runtime whose kernel cannot start*" >"$o/failed-start.txt" 2>&1
echo "rc=$?" >>"$o/failed-start.txt"
WEFT_BACKEND=cuda timeout 200 build/cuda/tests/weft_tests "[pinned]" >"$o/pinned.txt" 2>&1
echo "rc=$?" >>"$o/pinned.txt"
tar -czf "$OUT/s30a.tgz" -C "$OUT" s30a && rm -rf "$o"
