#!/usr/bin/env bash
# build_variant.sh SRC NAME [extra CXX flags]: builds SRC's weft_bench_device into
# /work/main/build/cuda/bench/variants/NAME/
set -euo pipefail
src=$1; name=$2; extra=${3:-}
b=/tmp/v/build-$name
rm -rf "$b"
cmake -S "$src" -B "$b" -G Ninja -DWEFT_ENABLE_CUDA=ON -DCMAKE_CXX_COMPILER=clang++-22 -DCMAKE_BUILD_TYPE=Release \
  ${extra:+-DCMAKE_CXX_FLAGS="$extra"} >/dev/null
cmake --build "$b" -j2 --target weft_bench_device > "$b.log" 2>&1
out=/work/main/build/cuda/bench/variants/$name
mkdir -p "$out"
cp "$b/bench/weft_bench_device" "$out/"
grep -A2 "weft_worker_kernel" "$b.log" | grep -m1 "registers" > "$out/ptxas.txt" || true
echo "built $name"
