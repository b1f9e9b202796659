#!/usr/bin/env bash
# Session 28, call c: spawn_many's decomposition, built right this time (the macro in the
# source; call b's leaf binaries were HEAD's code, since CMAKE_CXX_FLAGS does not reach
# the CUDA compile): leaf0 = the benchmark as it is, leaf1 = spawn the tiny tasks and
# detach them (no join), leaf2 = await each tiny task inline (no spawn), leaf3 = no tiny
# tasks (the tree alone). Each at 2.5M, 10M and 20M tasks; two alternating rounds, then
# leaf0 and leaf3 with 528 worker warps (4 per SM) once.
set -u
export LD_LIBRARY_PATH=build/cuda/bench
V=build/cuda/bench/variants
o=$OUT/s28c
mkdir -p "$o"
nvidia-smi >"$o/nvidia-smi.txt" 2>&1
for r in 1 2; do
  for v in leaf0 leaf1 leaf2 leaf3; do
    "$V/$v/weft_bench_device" --benchmark_filter=spawn_many --benchmark_out="$o/$v-$r.json" \
      --benchmark_out_format=json >"$o/$v-$r.txt" 2>&1
  done
done
for v in leaf0 leaf3; do
  WEFT_BENCH_WORKERS=528 "$V/$v/weft_bench_device" --benchmark_filter=spawn_many --benchmark_out="$o/$v-w528-1.json" \
    --benchmark_out_format=json >"$o/$v-w528-1.txt" 2>&1
done
tar -czf "$OUT/s28c.tgz" -C "$OUT" s28c && rm -rf "$o"
