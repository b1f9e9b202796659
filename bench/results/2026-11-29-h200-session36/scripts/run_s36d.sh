#!/usr/bin/env bash
# Session 36, call d: the staging test on a build with the old enqueue_from_lane (two claim
# bounds, fetch_sub on failure) and everything else as call b: does the test catch it?
set -u
o=$OUT/s36d
mkdir -p "$o"
for r in 1 2 3 4; do
  WEFT_BACKEND=cuda timeout 45 build/oe/weft_tests -d yes "spawns past the staging area*" >"$o/old-staging-$r.txt" 2>&1
  echo "rc=$?" >>"$o/old-staging-$r.txt"
done
tar -czf "$OUT/s36d.tgz" -C "$OUT" s36d && rm -rf "$o"
