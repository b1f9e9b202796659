#!/usr/bin/env bash
# Session 35, call e: the final candidate (worker 0 naps at most 1 us; poll_host reads the
# next slot's seq as a hint before it creates the root; a nap that ended on staged tasks
# returns at once; io_inflight loads every box before testing): the host-submission tests
# of the suite 3 times, then scripts/gpu-check (the suite, the sanitizers, the examples).
set -u
o=$OUT/s35e
mkdir -p "$o"
t0=$(date +%s)
for r in 1 2 3; do
  WEFT_BACKEND=cuda timeout 120 build/cuda/tests/weft_tests "the host keeps submitting roots*,host submissions beyond the completion records*,*block_on*" >"$o/submit-$r.txt" 2>&1
  echo "rc=$?" >>"$o/submit-$r.txt"
done
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$?" >>"$o/gpu-check.txt"
echo "wall $(( $(date +%s) - t0 )) s" >>"$o/gpu-check.txt"
tar -czf "$OUT/s35e.tgz" -C "$OUT" s35e && rm -rf "$o"
