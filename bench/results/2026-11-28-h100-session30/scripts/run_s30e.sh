#!/usr/bin/env bash
# Session 30, call e: as call d, with device_runtime::accepts saying yes once the runtime stopped or
# faulted (submit then reports why) and the cross_tu test asking after shutdown.
set -u
o=$OUT/s30e
mkdir -p "$o"
WEFT_BACKEND=cuda timeout 100 build/cuda/tests/weft_tests -s "a kernel launch that fails*" >"$o/launch-fails.txt" 2>&1
echo "rc=$?" >>"$o/launch-fails.txt"
WEFT_BACKEND=cuda timeout 100 build/cuda/tests/weft_tests -s "a runtime whose module constants*" >"$o/unbind-fails.txt" 2>&1
echo "rc=$?" >>"$o/unbind-fails.txt"
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$?" >>"$o/gpu-check.txt"
tar -czf "$OUT/s30e.tgz" -C "$OUT" s30e && rm -rf "$o"
