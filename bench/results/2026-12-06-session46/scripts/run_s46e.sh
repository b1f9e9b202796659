#!/usr/bin/env bash
# Session 46, call e (same warm machine): base's spawn_many, then grp's spawn_many and spawn_many_group in one
# process, alternating, 2 rounds.
export LD_LIBRARY_PATH=build/cuda/bench; mkdir -p $OUT/e
for r in 1 2; do
  timeout 30 build/base46/weft_bench_device --benchmark_filter='BM_spawn_many/' --benchmark_counters_tabular=true > $OUT/e/base-$r.txt 2>&1
  timeout 30 build/grp46/weft_bench_device --benchmark_filter='spawn_many_group|BM_spawn_many/' --benchmark_counters_tabular=true > $OUT/e/grp-$r.txt 2>&1
done
