#!/usr/bin/env bash
# Session 30, call c: the same code with the failed-start test tagged [api_error], which gpu-check now
# runs under memcheck apart (API errors not reported): gpu-check with the sanitizers, the
# failed-start test alone (-s), and the [pinned] tests once more.
set -u
o=$OUT/s30c
mkdir -p "$o"
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$?" >>"$o/gpu-check.txt"
WEFT_BACKEND=cuda timeout 100 build/cuda/tests/weft_tests -s "a cuda runtime whose kernel cannot start*" >"$o/failed-start.txt" 2>&1
echo "rc=$?" >>"$o/failed-start.txt"
WEFT_BACKEND=cuda timeout 200 build/cuda/tests/weft_tests "[pinned]" >"$o/pinned.txt" 2>&1
echo "rc=$?" >>"$o/pinned.txt"
tar -czf "$OUT/s30c.tgz" -C "$OUT" s30c && rm -rf "$o"
