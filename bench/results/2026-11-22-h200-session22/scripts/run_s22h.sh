#!/bin/bash
mkdir -p $OUT/r/teeth
for i in $(seq 1 8); do
  WEFT_BACKEND=cuda timeout 30 build/cuda/bench/variants/teeth/teeth_tests "*reads every word its setter*" > $OUT/r/teeth/wrong-$i.txt 2>&1; echo "wrong rc=$?"
  WEFT_BACKEND=cuda timeout 30 build/cuda/tests/weft_tests "*reads every word its setter*" > $OUT/r/teeth/right-$i.txt 2>&1; echo "right rc=$?"
done | sort | uniq -c
grep -h -B2 -A3 "==" $OUT/r/teeth/wrong-*.txt | grep -E "==|with expansion" -A1 | head -12
WEFT_BACKEND=cuda compute-sanitizer --tool memcheck build/cuda/tests/weft_tests "*reads every word its setter*" 2>&1 | tail -3
cd $OUT && tar czf r.tgz r && rm -rf r
