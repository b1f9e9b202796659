#!/usr/bin/env bash
# Session 29, call a: HEAD (dd4535e) vs inline joins, alternating processes, two rounds.
set -u
o=$OUT/s29a; mkdir -p "$o"
export LD_LIBRARY_PATH=$PWD/build/cuda/bench:${LD_LIBRARY_PATH:-}
nvidia-smi -L > "$o/device.txt" 2>&1
f='yield_many|spawn_many|chained_bulk|dependent_decision|ping_pong_pinned'
for r in 1 2; do for v in head inl; do
  timeout 200 build/cuda/bench/variants/$v/weft_bench_device --benchmark_filter="$f" \
    --benchmark_out="$o/$v-$r.json" --benchmark_out_format=json > "$o/$v-$r.txt" 2>&1
  echo "$v $r rc=$?" >> "$o/rc.txt"
done; done
tar -czf "$OUT/s29a.tgz" -C "$OUT" s29a && rm -rf "$o"
