#!/usr/bin/env bash
# Session 42, call g: the bench built with loop unrolling off in the device pass (-Xarch_device -fno-unroll-loops
# on device_bench.cpp, which holds the worker kernel too: smaller hot code, for the instruction-cache misses call f
# measured) against the landed build, one process each, alternating, 2 rounds.
# Pack: build/s42g/{base,nounroll}/weft_bench_device + build/cuda/bench/libbenchmark.so.1debian
set -u
o=$OUT/s42g
mkdir -p "$o"
tar -xJf build/carry/s42g.tar.xz
export LD_LIBRARY_PATH=$PWD/build/s42g
f='spawn_many|yield_many/1048576/64|yield_many/1048576/0|chained_bulk|dependent_decision|ping_pong_pinned/1000'
for r in 1 2; do
  for b in base nounroll; do
    timeout 120 build/s42g/$b/weft_bench_device --benchmark_filter="$f" --benchmark_out="$o/$b-$r.json" \
      --benchmark_out_format=json >"$o/$b-$r.txt" 2>&1
    echo "$b round $r rc=$?" >>"$o/runs.txt"
  done
done
tar -czf "$OUT/s42g.tgz" -C "$OUT" s42g
