#!/usr/bin/env bash
# Session 29, call c: head vs ac (owned-after-join, no second load) vs acb (+ no stop load in spawn)
# vs acd (ac + release-only completion), alternating, two rounds.
set -u
o=$OUT/s29c; mkdir -p "$o"
export LD_LIBRARY_PATH=$PWD/build/cuda/bench:${LD_LIBRARY_PATH:-}
f='yield_many|spawn_many|chained_bulk|dependent_decision|ping_pong_pinned'
for r in 1 2; do for v in head ac acb acd; do
  timeout 200 build/cuda/bench/variants/$v/weft_bench_device --benchmark_filter="$f" \
    --benchmark_out="$o/$v-$r.json" --benchmark_out_format=json > "$o/$v-$r.txt" 2>&1
  echo "$v $r rc=$?" >> "$o/rc.txt"
done; done
tar -czf "$OUT/s29c.tgz" -C "$OUT" s29c && rm -rf "$o"
