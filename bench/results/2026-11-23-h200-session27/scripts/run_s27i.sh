#!/bin/bash
# session 27, call 9: does the owner's release at `go` cost a shared step? e104787 (new) against its arrive made
# .relaxed after an explicit fence.acq_rel.cta (relfence: the same order, spelt out) and .relaxed with no fence
# (relaxed: not correct in general, a probe only), three alternating rounds
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
cd build/cuda
mkdir -p $OUT/r/release
for r in 1 2 3; do for v in new relfence relaxed; do
  b=bench/weft_bench_device; [ $v != new ] && b=bench/variants/$v/weft_bench_device
  timeout 60 $b --benchmark_filter='one_task_trip/1|chained|decision' --benchmark_out=$OUT/r/release/$v-$r.json --benchmark_out_format=json > $OUT/r/release/$v-$r.txt 2>&1
  echo "$v-$r rc=$?"; grep -i "error" $OUT/r/release/$v-$r.txt | head -2
done; done
python3 bench/summ.py $OUT/r/release
cd $OUT && tar czf r.tgz r && rm -rf r
