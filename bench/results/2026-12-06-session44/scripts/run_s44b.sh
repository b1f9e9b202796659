#!/usr/bin/env bash
# Session 44, call b: 1. weft_bench_device A/B, alternating, 2 rounds: new = b51c8a0 + steal_min (build/cuda) against
# three measurement-only builds that drop orderings the join path needs (WEFT_EXP_RELAX, patches/relax.patch; their
# results may be wrong, the bench checks the sums): relax1 = the join's state load relaxed (no L1 invalidation),
# relax2 = also complete_root's RMW, the wake RMW and the join's CAS without acquire (release kept), relax3 = those
# relaxed (no fence at all); 2. scripts/gpu-check on build/cuda (steal_min).
# Pack: tar -cJf build/carry/s44b.tar.xz build/cuda/tests/weft_tests build/cuda/tests/weft_device_smoke \
#   build/cuda/examples/saxpy build/cuda/examples/file_pipeline build/cuda/bench/weft_bench_device \
#   build/cuda/bench/libbenchmark.so.1debian build/relax44-1 build/relax44-2 build/relax44-3
set -u
o=$OUT/s44b
mkdir -p "$o"
tar -xJf build/carry/s44b.tar.xz
t0=$(date +%s)
export LD_LIBRARY_PATH=build/cuda/bench
f='spawn_many|yield_many'
for r in 1 2; do
  for v in new relax1 relax2 relax3; do
    case $v in new) b=build/cuda/bench/weft_bench_device ;; relax*) b=build/relax44-${v#relax}/weft_bench_device ;; esac
    timeout 60 $b --benchmark_filter="$f" --benchmark_counters_tabular=true --benchmark_out="$o/ab-$v-$r.json" \
      --benchmark_out_format=json >"$o/ab-$v-$r.txt" 2>&1
    echo "ab $v $r rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
  done
done
OUT=$o/check bash scripts/gpu-check >"$o/gpu-check.txt" 2>&1
echo "gpu-check rc=$? at $(( $(date +%s) - t0 )) s" >>"$o/log.txt"
tar -czf "$OUT/s44b.tgz" -C "$OUT" s44b
