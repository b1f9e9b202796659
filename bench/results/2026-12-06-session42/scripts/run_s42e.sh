#!/usr/bin/env bash
# Session 42, call e (diagnostic, for a later session): does the worker kernel miss in the instruction caches
# during spawn_many? Lists the instruction-cache metrics this Nsight Compute offers, then profiles the bench's
# persistent worker kernel (one launch: it runs from spawn_many's first block_on to the process's shutdown, so
# the idle time between iterations is in it too) with the warp-state section and those metrics, application replay.
# Pack: tar -cJf build/carry/s42e.tar.xz build/cuda/bench/weft_bench_device build/cuda/bench/libbenchmark.so.1debian
set -u
o=$OUT/s42e
mkdir -p "$o"
tar -xJf build/carry/s42e.tar.xz
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU" >"$o/ncu-path.txt"
"$NCU" --query-metrics --chip gh100 >"$o/metrics-all.txt" 2>&1
grep -iE "icc|instruction_cache|inst_fetch|no_instruction|imc" "$o/metrics-all.txt" >"$o/metrics-icache.txt"
m=$(awk '{print $1}' "$o/metrics-icache.txt" | grep -E "^(sm|smsp|l1)" | grep -vE "^Device|^----" | head -12 | sed 's/$/.sum/' | paste -sd, -)
echo "metrics: $m" >"$o/chosen.txt"
timeout 420 "$NCU" --clock-control none --replay-mode application -k regex:weft_worker_kernel -c 1 \
  --section WarpStateStats --section InstructionStats --section LaunchStats ${m:+--metrics "$m"} \
  -o "$o/spawn" build/cuda/bench/weft_bench_device --benchmark_filter='spawn_many' \
  >"$o/ncu.log" 2>&1
echo "ncu rc=$?" >>"$o/ncu.log"
"$NCU" --import "$o/spawn.ncu-rep" --page details >"$o/details.txt" 2>&1
"$NCU" --import "$o/spawn.ncu-rep" --page raw --csv >"$o/raw.csv" 2>&1
xz -9 "$o/spawn.ncu-rep" "$o/metrics-all.txt" 2>/dev/null
tar -czf "$OUT/s42e.tgz" -C "$OUT" s42e
