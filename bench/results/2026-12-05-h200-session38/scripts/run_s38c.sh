#!/usr/bin/env bash
# Session 38, call c: scripts/gpu-bench on the final build (device, io and net benchmarks).
set -u
o=$OUT/s38c
mkdir -p "$o"
OUT=$o/bench bash scripts/gpu-bench >"$o/gpu-bench.log" 2>&1
tar -czf "$OUT/s38c.tgz" -C "$OUT" s38c && rm -rf "$o"
