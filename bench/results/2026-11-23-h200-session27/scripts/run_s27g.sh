#!/bin/bash
# session 27, call 7 (final): gpu-check and gpu-bench on the landed build (inline_jobs_per_trip 1024, every look
# on the trip after a spent budget), then three A/B rounds against 17a0284's build (pre27)
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r/ab $OUT/r/bench
OUT=$OUT/r/check timeout 330 bash scripts/gpu-check > $OUT/r/check-console.txt 2>&1; echo "gpu-check rc=$?" >> $OUT/r/check-console.txt
grep -n "gpu-check\|test cases\|FAILED\|ERROR SUMMARY\|failed" $OUT/r/check-console.txt | tail -16
OUT=$OUT/r/bench timeout 200 bash scripts/gpu-bench > $OUT/r/bench-console.txt 2>&1; echo "gpu-bench rc=$?" >> $OUT/r/bench-console.txt
grep -E "rc=|idle_cost|suspended|registers" $OUT/r/bench-console.txt | cut -c1-220 | head -12
python3 build/cuda/bench/summ.py $OUT/r/bench
cd build/cuda
for r in 1 2 3; do for v in new pre27; do
  b=bench/weft_bench_device; [ $v != new ] && b=bench/variants/$v/weft_bench_device
  timeout 60 $b --benchmark_filter='one_task_trip|chained|decision|yield_many/1048576/64|spawn_many|ping_pong_pinned' --benchmark_out=$OUT/r/ab/$v-$r.json --benchmark_out_format=json > $OUT/r/ab/$v-$r.txt 2>&1
  echo "$v-$r rc=$?"
done; done
python3 bench/summ.py $OUT/r/ab | sed 's/ping_pong_pinned\/1000.one_way_p99_ns=[^ ]* //; s/batches_per_hop=[^ ]* //g'
cd $OUT && tar czf r.tgz r && rm -rf r
