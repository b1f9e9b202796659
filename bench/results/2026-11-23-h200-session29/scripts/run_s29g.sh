#!/usr/bin/env bash
# Session 29, call g: 15ba60d's build (spawn_pinned after shutdown; the joined-handle test counts frame drops):
# scripts/gpu-check with the sanitizers, then the [pinned] tests twice (no hidden tests match [pinned]).
set -u
o=$OUT/s29g
mkdir -p "$o"
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$?" >>"$o/gpu-check.txt"
for r in 1 2; do
  WEFT_BACKEND=cuda timeout 200 build/cuda/tests/weft_tests "[pinned]" >"$o/pinned-$r.txt" 2>&1
  echo "rc=$?" >>"$o/pinned-$r.txt"
done
WEFT_BACKEND=cuda timeout 100 build/cuda/tests/weft_tests -s "a joined handle reports its task finished*" >"$o/joined.txt" 2>&1
echo "rc=$?" >>"$o/joined.txt"
tar -czf "$OUT/s29g.tgz" -C "$OUT" s29g && rm -rf "$o"
