#!/usr/bin/env bash
# Session 42, call f (diagnostic, for a later session): instruction-cache misses of the worker kernel during
# spawn_many, through session 26's harness (prof_spawn: one root running the 10M-task tree 4 times; with
# WEFT_PROF_DEFER=1 the kernel starts after the root is queued and stops when it completes), ported to 0c7ee99
# in a worktree (patches/prof-defer-s42.patch; not in main). All worker warps (workers 0), then 528.
# Pack: tar -cJf build/carry/s42f.tar.xz -C /tmp/wt-prof build/cuda/bench/prof_spawn
set -u
o=$OUT/s42f
mkdir -p "$o"
tar -xJf build/carry/s42f.tar.xz
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
m=sm__icc_requests.sum,sm__icc_requests_lookup_hit.sum,sm__icc_requests_lookup_miss.sum,sm__icc_requests_lookup_miss_tag_miss.sum
m=$m,smsp__warps_issue_stalled_no_instruction.sum,smsp__warps_issue_stalled_long_scoreboard.sum,smsp__inst_executed.sum
m=$m,smsp__cycles_active.sum,smsp__warps_active.sum
for w in 0 528; do
  WEFT_PROF_DEFER=1 timeout 60 build/cuda/bench/prof_spawn 10000000 -1 $w 4 >"$o/plain-w$w.txt" 2>&1
  WEFT_PROF_DEFER=1 timeout 150 "$NCU" --clock-control none --replay-mode application -k regex:weft_worker -c 1 \
    --metrics "$m" -o "$o/spawn-w$w" build/cuda/bench/prof_spawn 10000000 -1 $w 4 >"$o/ncu-w$w.log" 2>&1
  echo "ncu w$w rc=$?" >>"$o/ncu-w$w.log"
  "$NCU" --import "$o/spawn-w$w.ncu-rep" --page raw --csv >"$o/raw-w$w.csv" 2>&1
  "$NCU" --import "$o/spawn-w$w.ncu-rep" --page details >"$o/details-w$w.txt" 2>&1
done
xz -9 "$o"/*.ncu-rep 2>/dev/null
tar -czf "$OUT/s42f.tgz" -C "$OUT" s42f
