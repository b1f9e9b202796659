#!/bin/bash
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r
build/cuda/bench/variants/pp_probe > $OUT/r/probe-polls.txt 2>&1; cut -c1-150 $OUT/r/probe-polls.txt
for r in 1 2 3; do for v in acqready p8 p16; do
  timeout 60 build/cuda/bench/variants/$v/weft_bench_device --benchmark_filter='ping_pong_pinned' > $OUT/r/$v-$r.txt 2>&1
  echo "== $v $r"; grep -E "ping_pong" $OUT/r/$v-$r.txt | sed 's/baseline_block.*one_way_p50/p50/; s/p50_over.*//' | cut -c1-220
done; done
cd $OUT && tar czf r.tgz r && rm -rf r
