#!/usr/bin/env bash
# Session 31, call j: scripts/gpu-bench on the final build (config::park_max_ns 10 us by default).
set -u
o=$OUT/s31j
mkdir -p "$o"
OUT=$o/bench bash scripts/gpu-bench >"$o/gpu-bench.log" 2>&1
tar -czf "$OUT/s31j.tgz" -C "$OUT" s31j && rm -rf "$o"
