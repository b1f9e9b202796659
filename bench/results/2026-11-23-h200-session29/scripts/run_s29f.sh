#!/usr/bin/env bash
# Session 29, call f: ff5f4b0's build: the targets at the line (chained_bulk, dependent_decision,
# ping_pong_pinned) and spawn_many in three more processes; the [runtime] tests twice without the
# hidden [fault] tests (call d's extra runs selected them, and the first fault poisoned the context).
set -u
o=$OUT/s29f; mkdir -p "$o"
export LD_LIBRARY_PATH=$PWD/build/cuda/bench:${LD_LIBRARY_PATH:-}
for r in 1 2 3; do
  timeout 150 build/cuda/bench/weft_bench_device --benchmark_filter='spawn_many|chained_bulk|dependent_decision|ping_pong_pinned' \
    --benchmark_out="$o/bench-$r.json" --benchmark_out_format=json > "$o/bench-$r.txt" 2>&1
  echo "bench $r rc=$?" >> "$o/rc.txt"
done
for r in 1 2; do
  WEFT_BACKEND=cuda timeout 200 build/cuda/tests/weft_tests "[runtime]~[fault]~[cross_tu]~[apart]" >"$o/runtime-$r.txt" 2>&1
  echo "runtime $r rc=$?" >> "$o/rc.txt"
done
tar -czf "$OUT/s29f.tgz" -C "$OUT" s29f && rm -rf "$o"
