#!/usr/bin/env bash
# Session 37, call a: the reactor's staged recv (through the thread's pinned staging buffer) and
# the new tests (test_reactor.cpp, the device_runtime frame-pool test): scripts/gpu-check.
# (The TCP echo A/B is call b: the carry limit leaves no room for both here.)
set -u
o=$OUT/s37a
mkdir -p "$o"
t0=$(date +%s)
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$? wall $(( $(date +%s) - t0 )) s" >>"$o/gpu-check.txt"
tar -czf "$OUT/s37a.tgz" -C "$OUT" s37a && rm -rf "$o"
