#!/usr/bin/env bash
# Session 28, call d: the LIFO slot's size (lifo_keep: staged tasks a warp keeps for its
# next batch; b0 = HEAD's 8, k16, k32) and the ring's capacity (WEFT_BENCH_RING: 256 by
# default, 1024), two alternating rounds of every pair.
set -u
export LD_LIBRARY_PATH=build/cuda/bench
V=build/cuda/bench/variants
o=$OUT/s28d
mkdir -p "$o"
nvidia-smi >"$o/nvidia-smi.txt" 2>&1
F='spawn_many|yield_many/1048576|chained|decision'
for r in 1 2; do
  for v in b0 k16 k32; do
    for q in 256 1024; do
      WEFT_BENCH_RING=$q "$V/$v/weft_bench_device" --benchmark_filter="$F" --benchmark_out="$o/$v-q$q-$r.json" \
        --benchmark_out_format=json >"$o/$v-q$q-$r.txt" 2>&1
    done
  done
done
tar -czf "$OUT/s28d.tgz" -C "$OUT" s28d && rm -rf "$o"
