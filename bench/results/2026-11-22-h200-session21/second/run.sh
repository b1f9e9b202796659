#!/bin/bash
# twenty-first session, second build: gpu-check, gpu-bench, an A/B of the touched
# benchmarks against be52137 (variants/prev), and the in-place poll's two forms.
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r/ab $OUT/r/poll
OUT=$OUT/r/check timeout 300 bash scripts/gpu-check > $OUT/r/check-console.txt 2>&1; echo "gpu-check rc=$?" >> $OUT/r/check-console.txt
grep -n "gpu-check\|test cases\|SUMMARY\|FAILED\|ERROR SUMMARY" $OUT/r/check-console.txt | tail -16
OUT=$OUT/r/bench timeout 150 bash scripts/gpu-bench > $OUT/r/bench-console.txt 2>&1; echo "gpu-bench rc=$?" >> $OUT/r/bench-console.txt
grep -E "rc=" $OUT/r/bench-console.txt
cd build/cuda
for r in 1 2; do for v in new prev; do
  b=bench/weft_bench_device; [ $v = prev ] && b=bench/variants/prev/weft_bench_device
  timeout 60 $b --benchmark_filter='one_task_trip|chained|decision|yield_many/1048576|spawn_many|ping_pong/1000/' --benchmark_out=$OUT/r/ab/$v-$r.json --benchmark_out_format=json > $OUT/r/ab/$v-$r.txt 2>&1
done; done
for r in 1 2; do for v in new poll1; do
  b=bench/weft_bench_device; [ $v = poll1 ] && b=bench/variants/poll1/weft_bench_device
  timeout 30 $b --benchmark_filter='ping_pong' --benchmark_out=$OUT/r/poll/$v-$r.json --benchmark_out_format=json > $OUT/r/poll/$v-$r.txt 2>&1
done; done
python3 bench/summ.py $OUT/r/ab
python3 bench/summ.py $OUT/r/poll
python3 bench/summ.py $OUT/r/bench
cd $OUT && tar czf r.tgz r && rm -rf r
