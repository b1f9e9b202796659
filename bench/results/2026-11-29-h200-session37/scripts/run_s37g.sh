#!/usr/bin/env bash
# Session 37, call g: staged sends batched per reactor round (asynchronous copies out of GPU memory),
# on top of call e's build:
# scripts/gpu-check.
set -u
o=$OUT/s37g
mkdir -p "$o"
t0=$(date +%s)
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$? wall $(( $(date +%s) - t0 )) s" >>"$o/gpu-check.txt"
tar -czf "$OUT/s37g.tgz" -C "$OUT" s37g && rm -rf "$o"
