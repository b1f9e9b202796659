#!/usr/bin/env bash
# Session 30, call g: a helper's review of 072f2b4: device_runtime::refusal (an errc, asked
# before the module is touched) replaces accepts; the [apart] test asks a stopped runtime
# from another translation unit while a second runtime's kernel runs; the failed-start
# test skips a GPU that could hold its pool. The [apart] test alone, then gpu-check.
set -u
o=$OUT/s30g
mkdir -p "$o"
WEFT_BACKEND=cuda timeout 60 build/cuda/tests/weft_tests -s "[apart]" >"$o/apart.txt" 2>&1
echo "rc=$?" >>"$o/apart.txt"
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$?" >>"$o/gpu-check.txt"
tar -czf "$OUT/s30g.tgz" -C "$OUT" s30g && rm -rf "$o"
