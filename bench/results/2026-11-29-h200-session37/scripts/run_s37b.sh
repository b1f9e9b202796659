#!/usr/bin/env bash
# Session 37, call b: the reactor's staged recv (through the thread's pinned staging buffer) and
# TCP echo (weft_bench_net) alternating the new build and build/oldnet (41ad535's reactor,
# the same bench source), 2 rounds each.
set -u
o=$OUT/s37b
mkdir -p "$o"
t0=$(date +%s)
export LD_LIBRARY_PATH=build/cuda/bench
for r in 1 2; do
  for v in new old; do
    bin=build/cuda/bench/weft_bench_net
    [ $v = old ] && bin=build/oldnet/weft_bench_net
    WEFT_BACKEND=cuda timeout 150 $bin --benchmark_out="$o/net-$v-$r.json" --benchmark_out_format=json \
      --benchmark_counters_tabular=true >"$o/net-$v-$r.txt" 2>&1
    echo "rc=$?" >>"$o/net-$v-$r.txt"
  done
done
echo "wall $(( $(date +%s) - t0 )) s" >>"$o/wall.txt"
tar -czf "$OUT/s37b.tgz" -C "$OUT" s37b && rm -rf "$o"
