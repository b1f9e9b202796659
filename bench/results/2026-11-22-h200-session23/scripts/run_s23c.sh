#!/bin/bash
# session 23, round 3: land1 (nost23 without the callable-beside-descriptor lookup), nofail (land1, no store of failed inline)
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r/ab
cd build/cuda
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader > $OUT/r/ab/gpu.txt
for r in 1 2 3; do for v in b23 nost23 land1 nofail; do
  timeout 80 bench/variants/$v/weft_bench_device --benchmark_filter='one_task_trip|chained|decision|yield_many/1048576/64|spawn_many|ping_pong' --benchmark_out=$OUT/r/ab/$v-$r.json --benchmark_out_format=json > $OUT/r/ab/$v-$r.txt 2>&1
done; done
python3 bench/summ.py $OUT/r/ab
cd $OUT && tar czf r.tgz r && rm -rf r
