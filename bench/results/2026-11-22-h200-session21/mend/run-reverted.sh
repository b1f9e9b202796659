#!/bin/bash
# twenty-first session, after the mend (84b2c76: one ping-pong body in the bench, one range
# check in spawn_pinned): gpu-check, then the ping-pong benchmarks against prev, alternating.
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r/ab


cd build/cuda
for r in 1 2; do for v in new prev; do
  b=bench/weft_bench_device; [ $v = prev ] && b=bench/variants/prev/weft_bench_device
  timeout 60 $b --benchmark_filter='ping_pong' --benchmark_out=$OUT/r/ab/$v-$r.json --benchmark_out_format=json > $OUT/r/ab/$v-$r.txt 2>&1
done; done
python3 bench/summ.py $OUT/r/ab
cd $OUT && tar czf r.tgz r && rm -rf r
