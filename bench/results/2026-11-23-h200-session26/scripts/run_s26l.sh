#!/bin/bash
# session 26, call 12: the shared step's block_share words and descriptor through shared-space instructions
# (ld/st/atom .shared; the SASS of lean shows generic LD.E/ATOM.E on the shared window there): lds against lean,
# three rounds of alternating processes
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r/ab
cd build/cuda
for r in 1 2 3; do for v in lean lds; do
  timeout 100 bench/variants/$v/weft_bench_device --benchmark_filter='one_task_trip|chained|decision' --benchmark_out=$OUT/r/ab/$v-$r.json --benchmark_out_format=json > $OUT/r/ab/$v-$r.txt 2>&1
  echo "$v-$r rc=$?"
done; done
python3 bench/summ.py $OUT/r/ab
cd $OUT && tar czf r.tgz r && rm -rf r
