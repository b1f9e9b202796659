#!/usr/bin/env bash
# Prepared in session 39, NOT RUN (the device budget ran out): patches/e1.patch (destroy_frame_and_chain looks at
# `current` only and walks a chain out of line; unwind_chain out of line; worker kernel 200 B stack) and
# patches/e2.patch (the `current` look only, all inline; 176 B stack), each applied to 4adbd0b-or-later and built
# as weft_bench_device into build/e1 and build/e2, against 6b0ce90's device code (build/bis/6b0ce90, the same
# as session 39's call a build) and 85fb491 (build/old85). One process each, alternating, 2 rounds.
# Pack: tar -cJf build/carry/s39d.tar.xz build/e1 build/e2 build/bis/6b0ce90 build/old85/weft_bench_device \
#         build/cuda/bench/libbenchmark.so.1debian
set -u
o=$OUT/s39d
mkdir -p "$o"
tar -xJf build/carry/s39d.tar.xz
export LD_LIBRARY_PATH=build/cuda/bench
f='spawn_many|yield_many/1048576/64|yield_many/1048576/0'
t0=$(date +%s)
for r in 1 2; do
  for v in base e1 e2 old85; do
    b=build/bis/6b0ce90/weft_bench_device
    [ $v = e1 ] && b=build/e1/weft_bench_device
    [ $v = e2 ] && b=build/e2/weft_bench_device
    [ $v = old85 ] && b=build/old85/weft_bench_device
    timeout 40 $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/e1-$v-$r.json" \
      --benchmark_out_format=json >"$o/e1-$v-$r.txt" 2>&1
    echo "$v $r rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
  done
done
tar -czf "$OUT/s39d.tgz" -C "$OUT" s39d && rm -rf "$o"
