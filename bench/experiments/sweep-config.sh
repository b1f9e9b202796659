#!/usr/bin/env bash
# On a GPU machine: the device benchmarks matching $1 (a --benchmark_filter regex) once per
# configuration below (WEFT_BENCH_WORKERS / WEFT_BENCH_PARK_MAX_NS, read by device_bench.cpp's
# shared_runtime), each in its own process. Output: ${OUT:-build/sweep}/<config>.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-build/sweep}"
mkdir -p "$out"
filter="${1:-yield_many|spawn_many}"
shift || true
configs=("${@:-default}")
for cfg in "${configs[@]}"; do
  w=""; p=""
  IFS=, read -r w p <<<"$cfg"
  [ "$cfg" = default ] && { w=""; p=""; }
  echo "== workers=${w:-all} park_max_ns=${p:-default}" | tee "$out/$cfg.txt"
  WEFT_BENCH_WORKERS="$w" WEFT_BENCH_PARK_MAX_NS="$p" LD_LIBRARY_PATH="build/cuda/bench${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    timeout 120 build/cuda/bench/weft_bench_device --benchmark_filter="$filter" --benchmark_counters_tabular=true 2>&1 | tee -a "$out/$cfg.txt"
done
