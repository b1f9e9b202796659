#!/bin/bash
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r
build/cuda/bench/variants/pp_probe > $OUT/r/probe-far.txt 2>&1; cut -c1-150 $OUT/r/probe-far.txt
which cuobjdump nvdisasm
cuobjdump -sass build/cuda/bench/variants/acqready/weft_bench_device > $OUT/r/acqready.sass 2>&1
cuobjdump -sass build/cuda/bench/variants/st2/weft_bench_device > $OUT/r/st2.sass 2>&1
ls -la $OUT/r
cd $OUT && tar czf r.tgz r && rm -rf r
