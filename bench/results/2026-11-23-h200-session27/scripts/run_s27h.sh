#!/bin/bash
# session 27, call 8: more processes of chained_bulk and dependent_decision on the final machine: the committed
# build (new) and 17a0284's (pre27), six alternating rounds
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
cd build/cuda
mkdir -p $OUT/r/more
for r in 1 2 3 4 5 6; do for v in new pre27; do
  b=bench/weft_bench_device; [ $v != new ] && b=bench/variants/$v/weft_bench_device
  timeout 60 $b --benchmark_filter='chained|decision' --benchmark_out=$OUT/r/more/$v-$r.json --benchmark_out_format=json > $OUT/r/more/$v-$r.txt 2>&1
  echo "$v-$r rc=$?"
done; done
python3 bench/summ.py $OUT/r/more
cd $OUT && tar czf r.tgz r && rm -rf r
