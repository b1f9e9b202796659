#!/bin/bash
# session 22: after the review's fixes to the tests: the payload test against the wrong build
# and the right one (8 processes each), the [pinned] cases, then gpu-check.
mkdir -p $OUT/r/teeth
for i in $(seq 1 8); do
  WEFT_BACKEND=cuda timeout 30 build/cuda/bench/variants/teeth/teeth_tests "*reads every word its setter*" > $OUT/r/teeth/wrong-$i.txt 2>&1; echo "wrong rc=$?"
  WEFT_BACKEND=cuda timeout 30 build/cuda/tests/weft_tests "*reads every word its setter*" > $OUT/r/teeth/right-$i.txt 2>&1; echo "right rc=$?"
done | sort | uniq -c
grep -h "with expansion" -A1 $OUT/r/teeth/wrong-*.txt | grep "==" | head -3
WEFT_BACKEND=cuda timeout 60 build/cuda/tests/weft_tests "[pinned]" 2>&1 | tail -2
OUT=$OUT/r/check timeout 480 bash scripts/gpu-check > $OUT/check-console.txt 2>&1; echo "gpu-check rc=$?" >> $OUT/check-console.txt
mv $OUT/check-console.txt $OUT/r/
grep -n "gpu-check\|test cases\|SUMMARY\|FAILED\|ERROR SUMMARY" $OUT/r/check-console.txt | tail -16
cd $OUT && tar czf r.tgz r && rm -rf r
