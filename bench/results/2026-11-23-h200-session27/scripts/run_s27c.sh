#!/bin/bash
# session 27, call 3: the inline budget renewed in place, inline look (inl27) against the first, out-of-line
# version (call27) and 17a0284's build (pre27); three alternating rounds, one process per binary
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
cd build/cuda
mkdir -p $OUT/r/ab
for r in 1 2 3; do for v in inl27 call27 pre27; do
  timeout 60 bench/variants/$v/weft_bench_device --benchmark_filter='one_task_trip|chained|decision|yield_many/1048576/64|spawn_many|ping_pong_pinned' --benchmark_out=$OUT/r/ab/$v-$r.json --benchmark_out_format=json > $OUT/r/ab/$v-$r.txt 2>&1
  echo "$v-$r rc=$?"
done; done
python3 bench/summ.py $OUT/r/ab | sed 's/ping_pong_pinned\/1000.one_way_p99_ns=[^ ]* //; s/batches_per_hop=[^ ]* //g'
cd $OUT && tar czf r.tgz r && rm -rf r
