#!/bin/bash
# session 22: ping-pong probe (two blocks), and the stamped weft variant
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $OUT/r/gpu.txt
build/cuda/bench/variants/pp_probe > $OUT/r/probe.txt 2>&1; cat $OUT/r/probe.txt
for r in 1 2; do
  for v in st base; do
    b=build/cuda/bench/weft_bench_device; [ $v = st ] && b=build/cuda/bench/variants/st/weft_bench_device
    timeout 60 $b --benchmark_filter='ping_pong' > $OUT/r/$v-$r.txt 2>&1
    echo "== $v $r"; grep -E "PPDBG|ping_pong" $OUT/r/$v-$r.txt | cut -c1-250
  done
done
cd $OUT && tar czf r.tgz r && rm -rf r
