#!/bin/bash
# session 26, call 8: hot code shared instead of inlined (spawn_many's warps wait on instruction fetch): release_handle
# out of line (ni1: the worker kernel 57 KB smaller), run_and_settle out of line (ni2: 17 KB), both (ni12); two rounds
# of alternating processes against lean
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r/ab
cd build/cuda
for r in 1 2; do for v in lean ni1 ni2 ni12; do
  timeout 100 bench/variants/$v/weft_bench_device --benchmark_filter='one_task_trip|chained|decision|yield_many/1048576|spawn_many|ping_pong_pinned' --benchmark_out=$OUT/r/ab/$v-$r.json --benchmark_out_format=json > $OUT/r/ab/$v-$r.txt 2>&1
  echo "$v-$r rc=$?"
done; done
python3 bench/summ.py $OUT/r/ab | sed -e 's/ping_pong_pinned[^ ]*batches_per_hop=[^ ]* //g'
cd $OUT && tar czf r.tgz r && rm -rf r
