#!/bin/bash
# session 25, call 2: join inlining with a per-root budget of 16 or 4 claims against HEAD (lean)
# two rounds of alternating processes.
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r/ab
cd build/cuda
for r in 1 2; do for v in lean inl16 inl4; do
  timeout 90 bench/variants/$v/weft_bench_device --benchmark_filter='one_task_trip|chained|decision|yield_many/1048576|spawn_many|ping_pong_pinned' --benchmark_out=$OUT/r/ab/$v-$r.json --benchmark_out_format=json > $OUT/r/ab/$v-$r.txt 2>&1
  echo "$v-$r rc=$?"
done; done
python3 bench/summ.py $OUT/r/ab
cd $OUT && tar czf r.tgz r && rm -rf r
