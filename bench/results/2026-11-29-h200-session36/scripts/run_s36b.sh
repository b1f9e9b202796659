#!/usr/bin/env bash
# Session 36, call b: the fixed build (enqueue_from_lane's one claim bound, the mailbox
# hint's head, notify_many's fence first, steal_half's __syncwarp, the host bulk board):
# the new staging test 5 times on its own, then scripts/gpu-check.
set -u
o=$OUT/s36b
mkdir -p "$o"
t0=$(date +%s)
for r in 1 2 3 4 5; do
  WEFT_BACKEND=cuda timeout 120 build/cuda/tests/weft_tests -d yes "spawns past the staging area*" >"$o/staging-$r.txt" 2>&1
  echo "rc=$?" >>"$o/staging-$r.txt"
done
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$?" >>"$o/gpu-check.txt"
echo "wall $(( $(date +%s) - t0 )) s" >>"$o/gpu-check.txt"
tar -czf "$OUT/s36b.tgz" -C "$OUT" s36b && rm -rf "$o"
