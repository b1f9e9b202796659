#!/usr/bin/env bash
# Session 43, call c: three builds of weft_bench_device, one process each, alternating, 3 rounds:
#   base: cf38b23 (build/base43); v1: try_begin_search as a relaxed fetch_add undone on overshoot, end_search
#   relaxed (the main tree's build, as in call b); v2: cf38b23's CAS loop with relaxed orders (no fence, no L1
#   invalidation per retry), end_search relaxed (a worktree build, build/v2-43).
# Pack: tar -cJf build/carry/s43c.tar.xz build/cuda/bench/weft_bench_device build/cuda/bench/libbenchmark.so.1debian \
#   build/base43/weft_bench_device build/v2-43/weft_bench_device
set -u
o=$OUT/s43c
mkdir -p "$o"
tar -xJf build/carry/s43c.tar.xz
t0=$(date +%s)
export LD_LIBRARY_PATH=build/cuda/bench
f='spawn_many|yield_many|chained|block_on_idle|decision'
for r in 1 2 3; do
  for v in base v1 v2; do
    case $v in base) b=build/base43/weft_bench_device ;; v1) b=build/cuda/bench/weft_bench_device ;; v2) b=build/v2-43/weft_bench_device ;; esac
    timeout 90 $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
    echo "ab $v $r rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
  done
done
tar -czf "$OUT/s43c.tgz" -C "$OUT" s43c
