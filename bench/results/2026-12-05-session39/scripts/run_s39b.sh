#!/usr/bin/env bash
# Session 39, call b: scripts/gpu-bench on the final build (device, io and net benchmarks).
set -u
o=$OUT/s39b
mkdir -p "$o"
OUT=$o/bench bash scripts/gpu-bench >"$o/gpu-bench.log" 2>&1
tar -czf "$OUT/s39b.tgz" -C "$OUT" s39b && rm -rf "$o"
