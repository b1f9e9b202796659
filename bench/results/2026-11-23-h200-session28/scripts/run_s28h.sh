#!/usr/bin/env bash
# Session 28, call h: scripts/gpu-bench on the final build (carry build/cuda/bench/weft_bench_device,
# weft_bench_io, weft_bench_net and libbenchmark.so.1debian).
set -u
o=$OUT/s28h
mkdir -p "$o"
OUT=$o/bench bash scripts/gpu-bench >"$o/gpu-bench.log" 2>&1
echo "gpu-bench rc=$?" >>"$o/gpu-bench.log"
tar -czf "$OUT/s28h.tgz" -C "$OUT" s28h && rm -rf "$o"
