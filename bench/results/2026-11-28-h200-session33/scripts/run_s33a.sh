#!/usr/bin/env bash
# Session 33, call a: the session's device code (device_submit_root's one queue_full branch) and
# its new test: the queue_full test alone (-s), the [pinned] tests 3 times, then scripts/gpu-check.
set -u
o=$OUT/s33a
mkdir -p "$o"
nvidia-smi >"$o/nvidia-smi.txt" 2>&1
t0=$(date +%s)
WEFT_BACKEND=cuda timeout 100 build/cuda/tests/weft_tests -s "a pinned spawn refused with queue_full*" >"$o/pinned-full.txt" 2>&1
echo "rc=$?" >>"$o/pinned-full.txt"
for r in 1 2 3; do
  WEFT_BACKEND=cuda timeout 200 build/cuda/tests/weft_tests "[pinned]" >"$o/pinned-$r.txt" 2>&1
  echo "rc=$?" >>"$o/pinned-$r.txt"
done
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$?" >>"$o/gpu-check.txt"
echo "wall $(( $(date +%s) - t0 )) s" >>"$o/gpu-check.txt"
tar -czf "$OUT/s33a.tgz" -C "$OUT" s33a && rm -rf "$o"
