#!/bin/bash
# session 27, call 1: the inline budget (inline_jobs_per_trip 64 / 128 / 256 / 1024) against chained_bulk,
# dependent_decision, one_task_trip and ping_pong_pinned; three alternating rounds, one process per binary;
# then lean with 528 workers (one block per SM: no neighbours on the owner's SM)
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
cd build/cuda
mkdir -p $OUT/r/bud $OUT/r/w528
F='one_task_trip|chained|decision|ping_pong_pinned'
for r in 1 2 3; do for v in lean bud128 bud256 bud1024; do
  timeout 60 bench/variants/$v/weft_bench_device --benchmark_filter="$F" --benchmark_out=$OUT/r/bud/$v-$r.json --benchmark_out_format=json > $OUT/r/bud/$v-$r.txt 2>&1
  echo "$v-$r rc=$?"
done; done
for r in 1 2; do for w in 528 1584; do
  WEFT_BENCH_WORKERS=$w timeout 60 bench/variants/lean/weft_bench_device --benchmark_filter='chained|decision' --benchmark_out=$OUT/r/w528/lean-w$w-$r.json --benchmark_out_format=json > $OUT/r/w528/lean-w$w-$r.txt 2>&1
  echo "w$w-$r rc=$?"
done; done
python3 bench/summ.py $OUT/r/bud
python3 bench/summ.py $OUT/r/w528
cd $OUT && tar czf r.tgz r && rm -rf r
