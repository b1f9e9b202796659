#!/usr/bin/env bash
# Session 37, call e: the device-side review fixes (run_inline's refusals in the awaiters, the
# doomed-wake check, bulk's chunk clamp and publication read, when_any's runner reference,
# spawn_detached_on) and the cuda runtime host-side fixes, built at cce5258: scripts/gpu-check.
set -u
o=$OUT/s37e
mkdir -p "$o"
t0=$(date +%s)
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$? wall $(( $(date +%s) - t0 )) s" >>"$o/gpu-check.txt"
tar -czf "$OUT/s37e.tgz" -C "$OUT" s37e && rm -rf "$o"
