#!/bin/bash
# session 26, call 1: blocks of 6 warps (2 per SM: 5 servers for a lone task's inline step) and of 10 warps
# (1 per SM: 9 servers) against HEAD's shape (lean: 4 warps, 3 blocks per SM), two rounds of alternating processes
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r/ab
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/r/gpu.txt 2>&1
cd build/cuda
for r in 1 2; do for v in lean w6 w10; do
  timeout 100 bench/variants/$v/weft_bench_device --benchmark_filter='one_task_trip|chained|decision|yield_many/1048576|spawn_many|ping_pong_pinned|idle_cost' --benchmark_out=$OUT/r/ab/$v-$r.json --benchmark_out_format=json > $OUT/r/ab/$v-$r.txt 2>&1
  echo "$v-$r rc=$?"
done; done
python3 bench/summ.py $OUT/r/ab
grep -h "idle_cost\|worker_warps" $OUT/r/ab/*-1.txt | cut -c1-200 | head
cd $OUT && tar czf r.tgz r && rm -rf r
