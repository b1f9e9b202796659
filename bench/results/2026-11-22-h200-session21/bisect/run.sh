#!/bin/bash
# twenty-first session: which part of the change costs yield_many and spawn_many (variants
# from the working tree with one part undone), in alternating processes.
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r/bisect
cd build/cuda
for r in 1 2; do for v in new prev hdr nocheck noinbox; do
  b=bench/weft_bench_device; [ $v != new ] && b=bench/variants/$v/weft_bench_device
  timeout 40 $b --benchmark_filter='one_task_trip/0|yield_many/1048576/64|spawn_many' --benchmark_out=$OUT/r/bisect/$v-$r.json --benchmark_out_format=json > $OUT/r/bisect/$v-$r.txt 2>&1
done; done
python3 bench/summ.py $OUT/r/bisect
cd $OUT && tar czf r.tgz r && rm -rf r
