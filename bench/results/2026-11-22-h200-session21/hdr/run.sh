#!/bin/bash
# twenty-first session: the old header order (hdr) and that with inbox_rest in global
# memory instead of the staging area (hdr2), against be52137 (prev), alternating.
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r/hdr
cd build/cuda
for r in 1 2; do for v in prev hdr2 hdr; do
  b=bench/variants/$v/weft_bench_device
  timeout 60 $b --benchmark_filter='one_task_trip|yield_many/1048576|spawn_many|chained|decision|ping_pong' --benchmark_out=$OUT/r/hdr/$v-$r.json --benchmark_out_format=json > $OUT/r/hdr/$v-$r.txt 2>&1
done; done
python3 bench/summ.py $OUT/r/hdr
cd $OUT && tar czf r.tgz r && rm -rf r
