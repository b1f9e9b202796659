#!/usr/bin/env bash
# Session 33, call h: is spawn_many's -3.4 % (call e) the in-place changes or device_submit_root's one
# branch? base (9cfe0d1), v1 (the final candidate: 1,024 waits a trip and the reclaim in the probe,
# device_submit_root as it was), vq (v1 with 16 waits a trip: the probe's reclaim alone); alternating, 3 rounds.
set -u
o=$OUT/s33h
mkdir -p "$o"
export LD_LIBRARY_PATH=build/cuda/bench
f='yield_many/1048576/64|spawn_many|ping_pong_pinned'
for r in 1 2 3; do
  for v in base v1 vq; do
    build/$v/weft_bench_device --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
  done
done
tar -czf "$OUT/s33h.tgz" -C "$OUT" s33h && rm -rf "$o"
