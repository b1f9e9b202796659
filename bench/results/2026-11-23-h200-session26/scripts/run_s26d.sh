#!/bin/bash
# session 26, call 4: code size (the worker kernel's SASS: 1.08 MB at -O3) against spawn_many's instruction-fetch
# stalls: HEAD's device code built with -Xarch_device -Os (938 KB) and with -mllvm -inline-threshold=60 (977 KB),
# two rounds of alternating processes against lean (-O3)
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r/ab
cd build/cuda
for r in 1 2; do for v in lean os inl60; do
  timeout 100 bench/variants/$v/weft_bench_device --benchmark_filter='one_task_trip|chained|decision|yield_many/1048576|spawn_many|ping_pong_pinned' --benchmark_out=$OUT/r/ab/$v-$r.json --benchmark_out_format=json > $OUT/r/ab/$v-$r.txt 2>&1
  echo "$v-$r rc=$?"
done; done
python3 bench/summ.py $OUT/r/ab
cd $OUT && tar czf r.tgz r && rm -rf r
