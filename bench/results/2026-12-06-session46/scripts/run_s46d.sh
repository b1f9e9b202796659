#!/usr/bin/env bash
# Session 46, call d (on the machine call b left warm, its carry already unpacked): grp's spawn_many_group
# alone, in two fresh processes (the second's --benchmark_min_time was overridden by the bench's MinTime).
export LD_LIBRARY_PATH=build/cuda/bench; mkdir -p $OUT/d
timeout 40 build/grp46/weft_bench_device --benchmark_filter='spawn_many_group' --benchmark_counters_tabular=true > $OUT/d/g1.txt 2>&1
timeout 40 build/grp46/weft_bench_device --benchmark_filter='spawn_many_group/10000000/0' --benchmark_min_time=0.2 > $OUT/d/g2.txt 2>&1
