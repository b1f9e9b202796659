#!/bin/bash
# session 26, call 11: the SASS of lean's bench binary (HEAD's device code), for the servers' path between the
# mbarrier wait and the loop over f (stamps: ~460 cycles there)
mkdir -p $OUT/r/sass
CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda/bin/cuobjdump | head -1)
echo "cuobjdump: $CUOBJ"
$CUOBJ -sass build/cuda/bench/variants/lean/weft_bench_device > $OUT/r/sass/lean.sass 2>&1; echo "rc=$?"
ls -la $OUT/r/sass; grep -c "Function :" $OUT/r/sass/lean.sass
xz -9 $OUT/r/sass/lean.sass
cd $OUT && tar czf r.tgz r && rm -rf r
