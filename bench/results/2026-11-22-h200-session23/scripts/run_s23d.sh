#!/bin/bash
# session 23, round 4: fixed (servers read the copied callable from its place beside the
# descriptor, with asm loads issued at once), fixed2 (fixed + the owner's sharing words
# read with its inline check), against land (ac9105f) and b23 (52ca79e)
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r/ab
cd build/cuda
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader > $OUT/r/ab/gpu.txt
for r in 1 2 3; do for v in b23 land fixed fixed2; do
  b=bench/variants/$v/weft_bench_device; [ $v = land ] && b=bench/weft_bench_device
  timeout 80 $b --benchmark_filter='one_task_trip|chained|decision|yield_many/1048576/64|spawn_many|ping_pong' --benchmark_out=$OUT/r/ab/$v-$r.json --benchmark_out_format=json > $OUT/r/ab/$v-$r.txt 2>&1
done; done
python3 bench/summ.py $OUT/r/ab
cd $OUT && tar czf r.tgz r && rm -rf r
