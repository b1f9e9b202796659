#!/usr/bin/env bash
# Session 36, call a: HEAD 129f865's build (session 35's helpers has_staged / trip_budget_spent,
# no behaviour change intended): scripts/gpu-check (the suite, the sanitizers, the examples),
# and the worker kernel's ptxas line from the bench's build log is kept here.
set -u
o=$OUT/s36a
mkdir -p "$o"
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$o/gpu.txt" 2>&1
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$?" >>"$o/gpu-check.txt"
echo "wall $(( $(date +%s) - t0 )) s" >>"$o/gpu-check.txt"
tar -czf "$OUT/s36a.tgz" -C "$OUT" s36a && rm -rf "$o"
