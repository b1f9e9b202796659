#!/usr/bin/env bash
# Session 29, call e: scripts/gpu-bench on the build of call d.
set -u
o=$OUT/s29e
mkdir -p "$o"
OUT=$o/bench bash scripts/gpu-bench >"$o/gpu-bench.log" 2>&1
echo "gpu-bench rc=$?" >>"$o/gpu-bench.log"
tar -czf "$OUT/s29e.tgz" -C "$OUT" s29e && rm -rf "$o"
