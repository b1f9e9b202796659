#!/bin/bash
# twenty-first session, the landed build: gpu-check, gpu-bench, two A/B rounds against
# be52137 (variants/prev) in alternating processes.
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r/ab
OUT=$OUT/r/check timeout 300 bash scripts/gpu-check > $OUT/r/check-console.txt 2>&1; echo "gpu-check rc=$?" >> $OUT/r/check-console.txt
grep -n "gpu-check\|test cases\|SUMMARY\|FAILED\|ERROR SUMMARY" $OUT/r/check-console.txt | tail -16
OUT=$OUT/r/bench timeout 200 bash scripts/gpu-bench > $OUT/r/bench-console.txt 2>&1; echo "gpu-bench rc=$?" >> $OUT/r/bench-console.txt
grep -E "rc=|idle_cost|suspended|echo|host_call" $OUT/r/bench-console.txt | cut -c1-200 | head -20
cd build/cuda
for r in 1 2; do for v in new prev; do
  b=bench/weft_bench_device; [ $v = prev ] && b=bench/variants/prev/weft_bench_device
  timeout 60 $b --benchmark_filter='one_task_trip|chained|decision|yield_many/1048576|spawn_many|ping_pong' --benchmark_out=$OUT/r/ab/$v-$r.json --benchmark_out_format=json > $OUT/r/ab/$v-$r.txt 2>&1
done; done
python3 bench/summ.py $OUT/r/ab
python3 bench/summ.py $OUT/r/bench
cd $OUT && tar czf r.tgz r && rm -rf r
