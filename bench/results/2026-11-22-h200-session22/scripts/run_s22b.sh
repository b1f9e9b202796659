#!/bin/bash
# session 22: acquire polls (acq) and the wait in await_ready (acqready) against the tree (base)
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r/ab
cd build/cuda
for r in 1 2; do for v in base acq acqready; do
  b=bench/weft_bench_device; [ $v != base ] && b=bench/variants/$v/weft_bench_device
  timeout 80 $b --benchmark_filter='one_task_trip|chained|decision|yield_many/1048576|spawn_many|ping_pong' --benchmark_out=$OUT/r/ab/$v-$r.json --benchmark_out_format=json > $OUT/r/ab/$v-$r.txt 2>&1
done; done
python3 bench/summ.py $OUT/r/ab
cd $OUT && tar czf r.tgz r && rm -rf r
