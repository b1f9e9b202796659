#!/usr/bin/env bash
# Session 33, call j: scripts/gpu-bench on the final build (call i's code), with the I/O and TCP benches.
set -u
o=$OUT/s33j
mkdir -p "$o"
OUT=$o/bench bash scripts/gpu-bench >"$o/gpu-bench.log" 2>&1
tar -czf "$OUT/s33j.tgz" -C "$OUT" s33j && rm -rf "$o"
