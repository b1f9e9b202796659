#!/usr/bin/env bash
# On a GPU machine: a same-machine A/B of the host_call round trip. Runs
# BM_host_call_roundtrip from two builds of weft_bench_io in alternating processes
# (each process allocates its own pinned mailboxes, whose placement moves the round
# trip by a few tenths of a microsecond), `rounds` times each, and prints each run's
# line per configuration (counters as the benchmark names them).
# Usage: bench/experiments/ab-roundtrip.sh A_BINARY B_BINARY [rounds]
set -uo pipefail
a="$1" b="$2" rounds="${3:-3}"
export LD_LIBRARY_PATH="build/cuda/bench${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for i in $(seq "$rounds"); do
  for bin in "$a" "$b"; do
    echo "== $(basename "$bin") run $i"
    "$bin" --benchmark_filter='BM_host_call_roundtrip' --benchmark_counters_tabular=true 2>&1 |
      grep -E '^(Benchmark|BM_host_call_roundtrip)'
  done
done
