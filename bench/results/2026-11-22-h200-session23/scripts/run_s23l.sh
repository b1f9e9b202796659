#!/bin/bash
# session 23: gpu-check on the build with the small-callable fix and the reworked visibility
# test, then the [bulk] tests 8 more times (the sharing checks must not be flaky)
OUT=$OUT/r/check timeout 420 bash scripts/gpu-check > $OUT/check-console.txt 2>&1; echo "gpu-check rc=$?" >> $OUT/check-console.txt
mkdir -p $OUT/r && mv $OUT/check-console.txt $OUT/r/
for i in 1 2 3 4 5 6 7 8; do WEFT_BACKEND=cuda timeout 60 build/cuda/tests/weft_tests "[bulk]~[stress]" > $OUT/r/bulk-repeat-$i.txt 2>&1; echo "repeat $i rc=$?" | tee -a $OUT/r/bulk-repeats.txt; tail -n 2 $OUT/r/bulk-repeat-$i.txt | head -1 >> $OUT/r/bulk-repeats.txt; done
grep -n "gpu-check\|test cases\|FAILED\|ERROR SUMMARY" $OUT/r/check-console.txt | tail -12
cat $OUT/r/bulk-repeats.txt
cd $OUT && tar czf r.tgz r && rm -rf r
