#!/usr/bin/env bash
# Session 37, call c: staged recvs batched per reactor round (asynchronous copies, one wait) and
# the new test_reactor.cpp case: scripts/gpu-check.
# (The TCP echo A/B is call d: the carry limit leaves no room for both here.)
set -u
o=$OUT/s37c
mkdir -p "$o"
t0=$(date +%s)
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$? wall $(( $(date +%s) - t0 )) s" >>"$o/gpu-check.txt"
tar -czf "$OUT/s37c.tgz" -C "$OUT" s37c && rm -rf "$o"
