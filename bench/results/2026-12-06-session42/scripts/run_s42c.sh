#!/usr/bin/env bash
# Session 42, call c: the host executor's benchmarks, 3dea683 (base) against this session's host executor (new:
# workers flush their frame caches when they park), alternating processes, 3 rounds, on the GPU machine's 16 cores.
# Pack: build/s42c/{base_bench_host,new_bench_host,libbenchmark.so.1debian} (both built with the host preset:
#   cmake --build build/host --target weft_bench_host, base in a worktree at 3dea683), tar -cJf build/carry/s42c.tar.xz build/s42c
set -u
o=$OUT/s42c
mkdir -p "$o"
tar -xJf build/carry/s42c.tar.xz
export LD_LIBRARY_PATH=$PWD/build/s42c
nproc >"$o/nproc.txt"
for r in 1 2 3; do
  for b in base new; do
    build/s42c/${b}_bench_host --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
      --benchmark_out="$o/$b-$r.json" --benchmark_out_format=json >"$o/$b-$r.txt" 2>&1
    echo "$b round $r rc=$?" >>"$o/runs.txt"
  done
done
tar -czf "$OUT/s42c.tgz" -C "$OUT" s42c
