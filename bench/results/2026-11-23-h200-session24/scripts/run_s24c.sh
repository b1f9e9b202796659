#!/bin/bash
# session 24, call 4: gpu-bench on the final build, then two more A/B rounds against HEAD's device code (base)
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r/ab
OUT=$OUT/r/bench timeout 300 bash scripts/gpu-bench > $OUT/r/bench-console.txt 2>&1; echo "gpu-bench rc=$?" >> $OUT/r/bench-console.txt
grep -E "rc=|idle_cost|suspended|echo|host_call|registers" $OUT/r/bench-console.txt | cut -c1-220 | head -20
cd build/cuda
for r in 4 5; do for v in new base; do
  b=bench/weft_bench_device; [ $v = base ] && b=bench/variants/base/weft_bench_device
  timeout 90 $b --benchmark_filter='one_task_trip|chained|decision|yield_many/1048576|spawn_many|ping_pong_pinned' --benchmark_out=$OUT/r/ab/$v-$r.json --benchmark_out_format=json > $OUT/r/ab/$v-$r.txt 2>&1
done; done
python3 bench/summ.py $OUT/r/ab
python3 bench/summ.py $OUT/r/bench
cd $OUT && tar czf r.tgz r && rm -rf r
