#!/bin/bash
# session 27, call 6: inline_jobs_per_trip 1024 with every look on the trip after a spent budget (k1024), against 17a0284 (pre27) and 63650d1 (lean)
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
cd build/cuda
mkdir -p $OUT/r/ab
for r in 1 2 3; do for v in k1024 pre27 lean; do
  timeout 60 bench/variants/$v/weft_bench_device --benchmark_filter='one_task_trip|chained|decision|ping_pong_pinned|yield_many/1048576/64|spawn_many' --benchmark_out=$OUT/r/ab/$v-$r.json --benchmark_out_format=json > $OUT/r/ab/$v-$r.txt 2>&1
  echo "$v-$r rc=$?"
done; done
python3 bench/summ.py $OUT/r/ab | sed 's/ping_pong_pinned\/1000.one_way_p99_ns=[^ ]* //; s/batches_per_hop=[^ ]* //g'
cd $OUT && tar czf r.tgz r && rm -rf r
