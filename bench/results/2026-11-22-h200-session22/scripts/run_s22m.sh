#!/bin/bash
# session 22, after the final read (the payload test reads the time through weft::detail::now_ns):
# the wrong build and the right one, 6 processes each; [pinned]; memcheck and synccheck on the payload test.
mkdir -p $OUT/r/teeth
for i in $(seq 1 6); do
  WEFT_BACKEND=cuda timeout 30 build/cuda/bench/variants/teeth/teeth_tests "*reads every word its setter*" > $OUT/r/teeth/wrong-$i.txt 2>&1; echo "wrong rc=$?"
  WEFT_BACKEND=cuda timeout 30 build/cuda/tests/weft_tests "*reads every word its setter*" > $OUT/r/teeth/right-$i.txt 2>&1; echo "right rc=$?"
done | sort | uniq -c
grep -h "with expansion" -A1 $OUT/r/teeth/wrong-*.txt | grep "==" | head -2
WEFT_BACKEND=cuda timeout 60 build/cuda/tests/weft_tests "[pinned]" 2>&1 | tail -2 | tee $OUT/r/pinned.txt
for t in memcheck racecheck synccheck; do
  WEFT_BLOCK_SHARE=0 WEFT_BACKEND=cuda timeout 200 compute-sanitizer --tool $t --error-exitcode 9 build/cuda/tests/weft_tests "[pinned]~[stress]" 2>&1 | tail -3 | tee $OUT/r/$t.txt
done
cd $OUT && tar czf r.tgz r && rm -rf r
