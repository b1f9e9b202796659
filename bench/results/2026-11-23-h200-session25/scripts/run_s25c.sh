#!/bin/bash
# session 25, call 3: spawn_many with leaves of 4, 8, 16, 32, 64 tiny tasks (bench-only variant `leaf`, HEAD's device code)
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r/leaf
cd build/cuda
for r in 1 2; do
  timeout 120 bench/variants/leaf/weft_bench_device --benchmark_filter='spawn_many' --benchmark_out=$OUT/r/leaf/leaf-$r.json --benchmark_out_format=json > $OUT/r/leaf/leaf-$r.txt 2>&1
  echo "leaf-$r rc=$?"
done
python3 bench/summ.py $OUT/r/leaf
cd $OUT && tar czf r.tgz r && rm -rf r
