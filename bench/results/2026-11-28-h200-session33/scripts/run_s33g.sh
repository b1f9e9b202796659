#!/usr/bin/env bash
# Session 33, call g (run inline as the device command): the new in-place test, with its final threshold
# (5 %), on the teeth build (other_work_probe not looking at the reclaim), 4 processes, -s for the values.
set -u; o=$OUT/s33g; mkdir -p $o; name="frames cached by warps whose tasks keep waking each other in place*"
for r in 1 2 3 4; do WEFT_BACKEND=cuda timeout 60 build/teeth/weft_tests -s "$name" > $o/inplace-teeth-$r.txt 2>&1; echo "rc=$?" >> $o/inplace-teeth-$r.txt; done
tar -czf $OUT/s33g.tgz -C $OUT s33g
