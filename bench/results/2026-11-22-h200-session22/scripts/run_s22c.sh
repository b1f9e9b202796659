#!/bin/bash
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r
build/cuda/bench/variants/pp_probe > $OUT/r/probe.txt 2>&1; head -14 $OUT/r/probe.txt | cut -c1-170
for r in 1 2; do for v in st2 acqready; do
  timeout 60 build/cuda/bench/variants/$v/weft_bench_device --benchmark_filter='ping_pong_pinned' > $OUT/r/$v-$r.txt 2>&1
  echo "== $v $r"; grep -E "PPDBG|ping_pong" $OUT/r/$v-$r.txt | sed 's/baseline_block.*one_way_p50/p50/' | cut -c1-220
done; done
cd $OUT && tar czf r.tgz r && rm -rf r
