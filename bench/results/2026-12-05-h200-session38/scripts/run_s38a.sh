#!/usr/bin/env bash
# Session 38, call a: scripts/gpu-check on the final build (the reviews' fixes: chain destruction
# order, already_taken, bulk_published naps, time-bounded naps, host handles that outlive their
# runtime, ...), then the new tests three more times each, one process per run.
# Carried as build/carry/s38a.tar.xz (the suite alone is ~46 MB): unpacked into build/cuda first.
set -u
o=$OUT/s38a
mkdir -p "$o"
tar -xJf build/carry/s38a.tar.xz
t0=$(date +%s)
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$? wall $(( $(date +%s) - t0 )) s" >>"$o/gpu-check.txt"
for r in 1 2 3; do
  for t in "warps with no chunk left to take nap*" "shutdown destroys a parked await chain*" \
           "a host handle that outlives its runtime*" "a join handle joined twice*" \
           "a runtime whose teardown on the GPU fails*" "a host function that calls block_on*"; do
    WEFT_BACKEND=cuda timeout 60 build/cuda/tests/weft_tests -w NoTests -s "$t" 2>&1 | grep -E "parks per|passed|failed|FAILED" | head -4 >>"$o/new-tests-$r.txt"
    echo "rc=${PIPESTATUS[0]} : $t" >>"$o/new-tests-$r.txt"
  done
done
tar -czf "$OUT/s38a.tgz" -C "$OUT" s38a && rm -rf "$o"
