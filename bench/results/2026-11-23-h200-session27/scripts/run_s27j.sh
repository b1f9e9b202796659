#!/bin/bash
# session 27, call 12: where the neighbours' cost comes from: e104787 with all 1,584 worker warps, 1,056, 528 (one
# block per SM), and 1,584 with idle naps of up to 1 ms instead of 100 us (WEFT_BENCH_PARK_MAX_NS), two rounds
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
cd build/cuda
mkdir -p $OUT/r/neighbours
for r in 1 2; do for v in w1584 w1056 w528 nap1ms; do
  case $v in w1584) e="";; w1056) e="WEFT_BENCH_WORKERS=1056";; w528) e="WEFT_BENCH_WORKERS=528";; nap1ms) e="WEFT_BENCH_PARK_MAX_NS=1000000";; esac
  env $e timeout 60 bench/weft_bench_device --benchmark_filter='one_task_trip/1|chained|decision' --benchmark_out=$OUT/r/neighbours/$v-$r.json --benchmark_out_format=json > $OUT/r/neighbours/$v-$r.txt 2>&1
  echo "$v-$r rc=$?"
done; done
python3 bench/summ.py $OUT/r/neighbours
cd $OUT && tar czf r.tgz r && rm -rf r
