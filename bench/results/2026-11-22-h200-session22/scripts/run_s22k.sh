#!/bin/bash
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r
for r in 1 2 3 4; do
  timeout 60 build/cuda/bench/variants/pk/weft_bench_device --benchmark_filter='ping_pong_pinned/10000' > $OUT/r/pk-$r.txt 2>&1
  echo "== $r"; grep -E "SLOW|ping_pong" $OUT/r/pk-$r.txt | sed 's/baseline_block.*one_way_p50/p50/; s/p50_over.*//' | cut -c1-200 | head -16
done
cd $OUT && tar czf r.tgz r && rm -rf r
