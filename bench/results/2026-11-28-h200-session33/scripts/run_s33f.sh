#!/usr/bin/env bash
# Session 33, call f: the new in-place test's teeth: the final code but with other_work_probe not looking
# at the frame pool's reclaim (build/teeth: `reclaim != st.reclaim_seen && false`), 4 processes; the test
# should fail there (the pair's warps keep their cached frames from the spawner).
set -u
o=$OUT/s33f
mkdir -p "$o"
name="frames cached by warps whose tasks keep waking each other in place*"
for r in 1 2 3 4; do
  WEFT_BACKEND=cuda timeout 60 build/teeth/weft_tests "$name" >"$o/inplace-teeth-$r.txt" 2>&1
  echo "rc=$?" >>"$o/inplace-teeth-$r.txt"
done
tar -czf "$OUT/s33f.tgz" -C "$OUT" s33f && rm -rf "$o"
