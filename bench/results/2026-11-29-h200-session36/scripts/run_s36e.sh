#!/usr/bin/env bash
# Session 36, call e: the final build (call c's nf code, plus the inbox fallbacks of
# enqueue_from_lane and push_to_ring, push_inbox/take_inbox untagging, and the new tests):
# the two new [runtime] tests 3 times each, then scripts/gpu-check.
set -u
o=$OUT/s36e
mkdir -p "$o"
t0=$(date +%s)
for r in 1 2 3; do
  WEFT_BACKEND=cuda timeout 120 build/cuda/tests/weft_tests -d yes "spawns past the staging area*,a broadcast set on one worker*" >"$o/new-tests-$r.txt" 2>&1
  echo "rc=$?" >>"$o/new-tests-$r.txt"
done
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$?" >>"$o/gpu-check.txt"
echo "wall $(( $(date +%s) - t0 )) s" >>"$o/gpu-check.txt"
tar -czf "$OUT/s36e.tgz" -C "$OUT" s36e && rm -rf "$o"
