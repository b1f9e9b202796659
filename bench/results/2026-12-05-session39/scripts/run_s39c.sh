#!/usr/bin/env bash
# Session 39, call c: where session 38's slowdown came from (call a's A/B: spawn_many -12 %, yield_many -7 to -15 %,
# block_on_idle +11 % against 85fb491). weft_bench_device built at each commit of session 38 that touched device
# code: 85fb491 (old), 5ddf1dc (chains destroyed innermost first, already_taken), 50118a5 (after b24c8b4's naps on
# bulk_published and %globaltimer, and 50118a5's result gaps), bed437a (the review of the diff), 6b0ce90 (atomics
# choice), and this session's build. One process each, in that order, 2 rounds.
set -u
o=$OUT/s39c
mkdir -p "$o"
tar -xJf build/carry/s39c.tar.xz
export LD_LIBRARY_PATH=build/cuda/bench
f='spawn_many|yield_many/1048576/64|yield_many/1048576/0|block_on_idle'
t0=$(date +%s)
for r in 1 2; do
  for v in old85 5ddf1dc 50118a5 bed437a 6b0ce90 new; do
    b=build/bis/$v/weft_bench_device
    [ $v = old85 ] && b=build/old85/weft_bench_device
    [ $v = new ] && b=build/cuda/bench/weft_bench_device
    timeout 60 $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/bis-$v-$r.json" \
      --benchmark_out_format=json >"$o/bis-$v-$r.txt" 2>&1
    echo "$v $r rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
  done
done
tar -czf "$OUT/s39c.tgz" -C "$OUT" s39c && rm -rf "$o"
