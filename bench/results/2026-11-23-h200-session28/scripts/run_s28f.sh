#!/usr/bin/env bash
# Session 28, call f: the suite on cuda after 24a0cc5 (its budget tests now assert on both
# backends; the device code is e104787's, which the twenty-seventh session's gpu-check
# passed with the sanitizers): scripts/gpu-check without the sanitizers, then the [bulk]
# tests three more times.
set -u
o=$OUT/s28f
mkdir -p "$o"
GPU_CHECK_QUICK=1 OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$?" >>"$o/gpu-check.txt"
for r in 1 2 3; do
  WEFT_BACKEND=cuda timeout 300 build/cuda/tests/weft_tests -d yes "[bulk]" >"$o/bulk-$r.txt" 2>&1
  echo "rc=$?" >>"$o/bulk-$r.txt"
done
tar -czf "$OUT/s28f.tgz" -C "$OUT" s28f && rm -rf "$o"
