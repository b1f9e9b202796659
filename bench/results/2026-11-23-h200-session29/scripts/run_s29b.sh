#!/usr/bin/env bash
# Session 29, call b: inline-join budget sweep (j0 j1 j4, inl = 16) against head, one round.
set -u
o=$OUT/s29b; mkdir -p "$o"
export LD_LIBRARY_PATH=$PWD/build/cuda/bench:${LD_LIBRARY_PATH:-}
f='yield_many|spawn_many'
for v in head j0 j1 j4 inl; do
  timeout 200 build/cuda/bench/variants/$v/weft_bench_device --benchmark_filter="$f" \
    --benchmark_out="$o/$v-1.json" --benchmark_out_format=json > "$o/$v-1.txt" 2>&1
  echo "$v rc=$?" >> "$o/rc.txt"
done
tar -czf "$OUT/s29b.tgz" -C "$OUT" s29b && rm -rf "$o"
