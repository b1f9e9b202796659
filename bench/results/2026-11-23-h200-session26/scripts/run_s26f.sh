#!/bin/bash
# session 26, call 6: is spawn_many's flattening with the warp count device-wide contention? 2048 frame-pool shards
# (one per warp; 128 in lean) and 528 inject shards (4 per SM; 132 in lean), two rounds of alternating processes
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r/ab
cd build/cuda
for r in 1 2; do for v in lean fshard ishard; do
  timeout 100 bench/variants/$v/weft_bench_device --benchmark_filter='spawn_many|yield_many/1048576|chained' --benchmark_out=$OUT/r/ab/$v-$r.json --benchmark_out_format=json > $OUT/r/ab/$v-$r.txt 2>&1
  echo "$v-$r rc=$?"
done; done
python3 bench/summ.py $OUT/r/ab
cd $OUT && tar czf r.tgz r && rm -rf r
