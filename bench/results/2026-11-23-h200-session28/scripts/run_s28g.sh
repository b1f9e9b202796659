#!/usr/bin/env bash
# Session 28, call g: rt.spawn_pinned (the submission slot carries the root's home; the
# device code of create_root and poll_host changed): scripts/gpu-check with the
# sanitizers, then the [pinned] tests three more times.
set -u
o=$OUT/s28g
mkdir -p "$o"
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$?" >>"$o/gpu-check.txt"
for r in 1 2 3; do
  WEFT_BACKEND=cuda timeout 300 build/cuda/tests/weft_tests -d yes "[pinned]" >"$o/pinned-$r.txt" 2>&1
  echo "rc=$?" >>"$o/pinned-$r.txt"
done
tar -czf "$OUT/s28g.tgz" -C "$OUT" s28g && rm -rf "$o"
