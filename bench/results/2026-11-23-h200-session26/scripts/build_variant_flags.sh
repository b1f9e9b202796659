#!/bin/bash
# usage: build_variant.sh SRC_TREE NAME
set -e
src=$1; name=$2
out=/work/main/build/cuda/bench/variants/$name; mkdir -p $out /tmp/v/$name
cd /tmp/v/$name
cp /work/main/build/cuda/libweft.a libweft.a
clang++-22 -DBOOST_ALL_NO_LIB -DWEFT_WITH_CUDA=1 -O3 -DNDEBUG -fPIC -std=c++20 -I$src/include -I$src/executor -isystem /usr/local/cuda/include/cccl -isystem /usr/local/cuda/include -c $src/src/device_runtime.cpp -o device_runtime.cpp.o
ar r libweft.a device_runtime.cpp.o
/usr/bin/clang++-22 -I$src/include -I$src/executor -isystem /usr/local/cuda/include/cccl --cuda-gpu-arch=sm_90 --cuda-path=/usr/local/cuda --no-offload-new-driver -Wno-unknown-cuda-version -O3 -DNDEBUG -std=c++20 $EXTRA -x cuda -c $src/bench/device_bench.cpp -o bench.o
clang++-22 -O3 bench.o -o $out/weft_bench_device -L/usr/local/cuda/lib64 libweft.a /usr/lib/x86_64-linux-gnu/libbenchmark.so.1.7.1 /usr/lib/x86_64-linux-gnu/libboost_context.a /usr/local/cuda/lib/libcudart_static.a -ldl /usr/lib/x86_64-linux-gnu/librt.a -lcudadevrt -lcudart_static -lrt -lpthread -ldl
echo built $out
