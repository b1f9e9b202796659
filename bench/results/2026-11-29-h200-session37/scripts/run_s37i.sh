#!/usr/bin/env bash
# Session 37, call i: the simplification commit 515581b (staging-part helpers, test helpers), built by the
# clean-clone CI's cuda compile stage:
# scripts/gpu-check.
set -u
o=$OUT/s37i
mkdir -p "$o"
t0=$(date +%s)
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$? wall $(( $(date +%s) - t0 )) s" >>"$o/gpu-check.txt"
tar -czf "$OUT/s37i.tgz" -C "$OUT" s37i && rm -rf "$o"
