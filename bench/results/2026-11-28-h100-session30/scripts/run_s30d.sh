#!/usr/bin/env bash
# Session 30, call d: tests/test_device_launch.cpp (a refused kernel launch; an unbind that
# fails at shutdown): the two tests alone (-s), then scripts/gpu-check with the sanitizers.
set -u
o=$OUT/s30d
mkdir -p "$o"
WEFT_BACKEND=cuda timeout 100 build/cuda/tests/weft_tests -s "a kernel launch that fails*" >"$o/launch-fails.txt" 2>&1
echo "rc=$?" >>"$o/launch-fails.txt"
WEFT_BACKEND=cuda timeout 100 build/cuda/tests/weft_tests -s "a runtime whose module constants*" >"$o/unbind-fails.txt" 2>&1
echo "rc=$?" >>"$o/unbind-fails.txt"
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$?" >>"$o/gpu-check.txt"
tar -czf "$OUT/s30d.tgz" -C "$OUT" s30d && rm -rf "$o"
