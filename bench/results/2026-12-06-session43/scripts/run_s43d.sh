#!/usr/bin/env bash
# Session 43, call d: the task object records that its frame ran (task::entered_), so a spawn or an await of a new
#   task reads nothing back from the frame; base bfc512a (build/base43b; built as 7c19737, the same tree before
#   its message was amended), new the main tree (bench only), 3 rounds.
# Pack: tar -cJf build/carry/s43d.tar.xz build/cuda/bench/weft_bench_device build/cuda/bench/libbenchmark.so.1debian \
#   build/base43b/weft_bench_device
set -u
o=$OUT/s43d
mkdir -p "$o"
tar -xJf build/carry/s43d.tar.xz
t0=$(date +%s)
export LD_LIBRARY_PATH=build/cuda/bench
f='spawn_many|yield_many|chained|block_on_idle|decision'
for r in 1 2 3; do
  for v in base new; do
    b=build/cuda/bench/weft_bench_device; [ $v = base ] && b=build/base43b/weft_bench_device
    timeout 90 $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
    echo "ab $v $r rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
  done
done
tar -czf "$OUT/s43d.tgz" -C "$OUT" s43d
