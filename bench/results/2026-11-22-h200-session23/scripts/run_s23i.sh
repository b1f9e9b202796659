#!/bin/bash
# session 23, final call 1 of 2: gpu-check on the final build
OUT=$OUT/r/check timeout 500 bash scripts/gpu-check > $OUT/check-console.txt 2>&1; echo "gpu-check rc=$?" >> $OUT/check-console.txt
mv $OUT/check-console.txt $OUT/r/
grep -n "gpu-check\|test cases\|SUMMARY\|FAILED\|ERROR SUMMARY" $OUT/r/check-console.txt | tail -16
cd $OUT && tar czf r.tgz r && rm -rf r
