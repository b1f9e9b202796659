#!/bin/bash
# session 26, call 5: gpu-check and gpu-bench on the build with the frame pool mends (mark_block, device_lane_cache:
# the same PTX as HEAD for the bench), then two A/B rounds against HEAD's device code (lean)
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r/ab $OUT/r/bench
OUT=$OUT/r/check timeout 300 bash scripts/gpu-check > $OUT/r/check-console.txt 2>&1; echo "gpu-check rc=$?" >> $OUT/r/check-console.txt
grep -n "gpu-check\|test cases\|FAILED\|ERROR SUMMARY" $OUT/r/check-console.txt | tail -14
OUT=$OUT/r/bench timeout 220 bash scripts/gpu-bench > $OUT/r/bench-console.txt 2>&1; echo "gpu-bench rc=$?" >> $OUT/r/bench-console.txt
grep -E "rc=|idle_cost|suspended|registers" $OUT/r/bench-console.txt | cut -c1-220 | head -12
cd build/cuda
for r in 1 2; do for v in new lean; do
  b=bench/weft_bench_device; [ $v = lean ] && b=bench/variants/lean/weft_bench_device
  timeout 60 $b --benchmark_filter='one_task_trip|chained|decision|yield_many/1048576|spawn_many|ping_pong_pinned' --benchmark_out=$OUT/r/ab/$v-$r.json --benchmark_out_format=json > $OUT/r/ab/$v-$r.txt 2>&1
done; done
python3 bench/summ.py $OUT/r/ab
# spread or packed: 528 active warps, 4 on every SM (lean, WEFT_BENCH_WORKERS=528) or 12 on every third SM (pack:
# all 1584 warps launched, those on SMs with smid % 3 != 0 leave at once, worker 0 stays), two rounds
mkdir -p $OUT/r/pack
for r in 1 2; do
  WEFT_BENCH_WORKERS=528 timeout 100 bench/variants/lean/weft_bench_device --benchmark_filter='spawn_many|yield_many/1048576' --benchmark_out=$OUT/r/pack/spread-$r.json --benchmark_out_format=json > $OUT/r/pack/spread-$r.txt 2>&1
  echo "spread-$r rc=$?"
  timeout 100 bench/variants/pack/weft_bench_device --benchmark_filter='spawn_many|yield_many/1048576' --benchmark_out=$OUT/r/pack/pack-$r.json --benchmark_out_format=json > $OUT/r/pack/pack-$r.txt 2>&1
  echo "pack-$r rc=$?"
done
python3 bench/summ.py $OUT/r/pack
python3 bench/summ.py $OUT/r/bench
cd $OUT && tar czf r.tgz r && rm -rf r
