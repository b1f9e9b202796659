#!/usr/bin/env bash
# Session 41, call c: what v2 costs without deferring anything. v2off is v2 with
# device_defer_root returning false at once (no spawn is deferred, so no join runs in place;
# the hooks, the 2 KiB of slots per warp and the larger stack stay). One process per binary,
# alternating with base and v2, 2 rounds. Carries build/carry/s41c.tar.xz (build/base41,
# build/v2, v2off as build/cuda/bench/weft_bench_device).
set -u
o=$OUT/s41c
mkdir -p "$o"
tar -xJf build/carry/s41c.tar.xz
export LD_LIBRARY_PATH=build/cuda/bench
f='spawn_many|yield_many/1048576/64|yield_many/1048576/0'
t0=$(date +%s)
for r in 1 2; do
  for v in base v2 v2off; do
    b=build/cuda/bench/weft_bench_device
    [ $v = base ] && b=build/base41/weft_bench_device
    [ $v = v2 ] && b=build/v2/weft_bench_device
    timeout 40 $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
    echo "ab $v $r rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
  done
done
tar -czf "$OUT/s41c.tgz" -C "$OUT" s41c
