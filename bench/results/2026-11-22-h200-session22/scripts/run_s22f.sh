#!/bin/bash
# session 22, call 1: gpu-check on the new build; the payload test on a deliberately wrong
# build (relaxed polls, no fence: teeth) and on the right one, 10 processes each.
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r/teeth
for i in $(seq 1 10); do
  WEFT_BACKEND=cuda timeout 30 build/cuda/bench/variants/teeth/teeth_tests "*reads every word its setter*" > $OUT/r/teeth/wrong-$i.txt 2>&1; echo "wrong $i rc=$?"
  WEFT_BACKEND=cuda timeout 30 build/cuda/tests/weft_tests "*reads every word its setter*" > $OUT/r/teeth/right-$i.txt 2>&1; echo "right $i rc=$?"
done | sort | uniq -c | sort -k2 | awk '{print}' | tr '\n' ';'; echo
grep -h "with expansion" -A2 $OUT/r/teeth/wrong-*.txt | grep "==" | sort | uniq -c | head -5
OUT=$OUT/r/check timeout 420 bash scripts/gpu-check > $OUT/r/check-console.txt 2>&1; echo "gpu-check rc=$?" >> $OUT/r/check-console.txt
grep -n "gpu-check\|test cases\|SUMMARY\|FAILED\|ERROR SUMMARY" $OUT/r/check-console.txt | tail -16
cd $OUT && tar czf r.tgz r && rm -rf r
