#!/bin/bash
# session 24, call 3: gpu-check on the build with the pool's constants in the constant bank and the lane
# caches' inline fast paths (the teardown flag moved there too: the shutdown tests cover it)
OUT=$OUT/r/check timeout 480 bash scripts/gpu-check > $OUT/check-console.txt 2>&1; echo "gpu-check rc=$?" >> $OUT/check-console.txt
mkdir -p $OUT/r && mv $OUT/check-console.txt $OUT/r/
grep -n "gpu-check\|test cases\|FAILED\|ERROR SUMMARY" $OUT/r/check-console.txt | tail -14
cd $OUT && tar czf r.tgz r && rm -rf r
