#!/bin/bash
# session 23, final call 2 (second build, after the review): gpu-bench on the new build, then two A/B rounds against 52ca79e's
# device code (variants/b23) in alternating processes.
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r/ab
OUT=$OUT/r/bench timeout 250 bash scripts/gpu-bench > $OUT/r/bench-console.txt 2>&1; echo "gpu-bench rc=$?" >> $OUT/r/bench-console.txt
grep -E "rc=|idle_cost|suspended|echo|host_call" $OUT/r/bench-console.txt | cut -c1-200 | head -20
cd build/cuda
for r in 1 2; do for v in new base; do
  b=bench/weft_bench_device; [ $v = base ] && b=bench/variants/b23/weft_bench_device
  timeout 70 $b --benchmark_filter='one_task_trip|chained|decision|yield_many/1048576|spawn_many|ping_pong' --benchmark_out=$OUT/r/ab/$v-$r.json --benchmark_out_format=json > $OUT/r/ab/$v-$r.txt 2>&1
done; done
python3 bench/summ.py $OUT/r/ab
python3 bench/summ.py $OUT/r/bench
cd $OUT && tar czf r.tgz r && rm -rf r
