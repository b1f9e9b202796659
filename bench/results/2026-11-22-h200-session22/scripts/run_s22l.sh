#!/bin/bash
# session 22: the idle path looks at the inbox before a search and after a nap that ended for work
# (park2) against fe958b0 (head), alternating, the filter plus idle cost.
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r/ab
cd build/cuda
for r in 1 2; do for v in head park1 park3; do
  b=bench/weft_bench_device; [ $v != head ] && b=bench/variants/$v/weft_bench_device
  timeout 90 $b --benchmark_filter='one_task_trip|chained|decision|yield_many/1048576|spawn_many|ping_pong|idle_cost' --benchmark_out=$OUT/r/ab/$v-$r.json --benchmark_out_format=json > $OUT/r/ab/$v-$r.txt 2>&1
done; done
python3 bench/summ.py $OUT/r/ab
grep -h "idle_cost" $OUT/r/ab/*.txt | cut -c1-160
cd $OUT && tar czf r.tgz r && rm -rf r
