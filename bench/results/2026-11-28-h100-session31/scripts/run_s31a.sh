#!/usr/bin/env bash
# Session 31, call a: homes of live pinned tasks nap at most 2 us (device_worker::pinned_live);
# event waits in place poll with acquire for two rounds, then relaxed with a fence after the
# match (acquire_poll_rounds). The new pinned test alone (-s), the [pinned] tests 3 times
# (the payload test now has 15 us gaps that reach the relaxed polls), then scripts/gpu-check.
set -u
o=$OUT/s31a
mkdir -p "$o"
WEFT_BACKEND=cuda timeout 100 build/cuda/tests/weft_tests -s "a worker counts the pinned tasks*" >"$o/pinned-count.txt" 2>&1
echo "rc=$?" >>"$o/pinned-count.txt"
for r in 1 2 3; do
  WEFT_BACKEND=cuda timeout 200 build/cuda/tests/weft_tests "[pinned]" >"$o/pinned-$r.txt" 2>&1
  echo "rc=$?" >>"$o/pinned-$r.txt"
done
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$?" >>"$o/gpu-check.txt"
tar -czf "$OUT/s31a.tgz" -C "$OUT" s31a && rm -rf "$o"
