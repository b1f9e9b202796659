#!/usr/bin/env bash
# Session 37, call h: TCP echo (weft_bench_net), three builds alternating, 3 rounds each:
# new (staged sends and recvs batched per round), cce (cce5258: recvs batched, sends one
# synchronous copy each; build/netcce), old (41ad535: one synchronous copy per recv and per send;
# build/oldnet). Same bench source.
set -u
o=$OUT/s37h
mkdir -p "$o"
t0=$(date +%s)
export LD_LIBRARY_PATH=build/cuda/bench
for r in 1 2 3; do
  for v in new cce old; do
    bin=build/cuda/bench/weft_bench_net
    [ $v = cce ] && bin=build/netcce/weft_bench_net
    [ $v = old ] && bin=build/oldnet/weft_bench_net
    WEFT_BACKEND=cuda timeout 150 $bin --benchmark_out="$o/net-$v-$r.json" --benchmark_out_format=json \
      --benchmark_counters_tabular=true >"$o/net-$v-$r.txt" 2>&1
    echo "rc=$?" >>"$o/net-$v-$r.txt"
  done
done
echo "wall $(( $(date +%s) - t0 )) s" >>"$o/wall.txt"
tar -czf "$OUT/s37h.tgz" -C "$OUT" s37h && rm -rf "$o"
