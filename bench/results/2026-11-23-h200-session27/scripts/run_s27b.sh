#!/bin/bash
# session 27, call 2: gpu-check on the build with the inline budget renewed in place, then three A/B rounds
# (new, pre27 = 17a0284's build), then gpu-bench
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r/ab $OUT/r/bench
OUT=$OUT/r/check timeout 330 bash scripts/gpu-check > $OUT/r/check-console.txt 2>&1; echo "gpu-check rc=$?" >> $OUT/r/check-console.txt
grep -n "gpu-check\|test cases\|FAILED\|ERROR SUMMARY\|failed" $OUT/r/check-console.txt | tail -16
cd build/cuda
for r in 1 2 3; do for v in new pre27; do
  b=bench/weft_bench_device; [ $v != new ] && b=bench/variants/$v/weft_bench_device
  timeout 60 $b --benchmark_filter='one_task_trip|chained|decision|yield_many/1048576|spawn_many|ping_pong_pinned' --benchmark_out=$OUT/r/ab/$v-$r.json --benchmark_out_format=json > $OUT/r/ab/$v-$r.txt 2>&1
  echo "$v-$r rc=$?"
done; done
python3 bench/summ.py $OUT/r/ab
cd ../..
OUT=$OUT/r/bench timeout 200 bash scripts/gpu-bench > $OUT/r/bench-console.txt 2>&1; echo "gpu-bench rc=$?" >> $OUT/r/bench-console.txt
grep -E "rc=|idle_cost|suspended|registers" $OUT/r/bench-console.txt | cut -c1-220 | head -12
python3 build/cuda/bench/summ.py $OUT/r/bench
cd $OUT && tar czf r.tgz r && rm -rf r
