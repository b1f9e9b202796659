#!/bin/bash
# session 26, call 7: Nsight Compute on spawn_many's worker kernel at 528 and at all (1584) worker warps
# (prof_spawn: one root running the 10M-task tree 4 times, the kernel launched after the root is queued and
# stopped when it completes: WEFT_PROF_DEFER, session 16's patch), to see whether the memory system saturates
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r/ncu
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU" | tee $OUT/r/ncu/ncu-path.txt
cd build/cuda/bench
for w in 528 0; do
  for i in 1 2; do WEFT_PROF_DEFER=1 timeout 60 ./prof_spawn 10000000 -1 $w 4; done > $OUT/r/ncu/plain-w$w.txt 2>&1
  cat $OUT/r/ncu/plain-w$w.txt
  WEFT_PROF_DEFER=1 timeout 240 $NCU --clock-control none --replay-mode application -k regex:weft_worker \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy \
    --metrics lts__t_sectors_op_atom.sum,lts__t_sectors_op_red.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sector_hit_rate.pct,l1tex__t_sector_hit_rate.pct,smsp__inst_executed.sum,smsp__thread_inst_executed.sum \
    -o $OUT/r/ncu/spawn-w$w ./prof_spawn 10000000 -1 $w 4 > $OUT/r/ncu/ncu-w$w.log 2>&1
  echo "ncu w$w rc=$?"; tail -3 $OUT/r/ncu/ncu-w$w.log
  $NCU --import $OUT/r/ncu/spawn-w$w.ncu-rep --page details > $OUT/r/ncu/details-w$w.txt 2>&1
  $NCU --import $OUT/r/ncu/spawn-w$w.ncu-rep --page raw --csv > $OUT/r/ncu/raw-w$w.csv 2>&1
  grep -E "Throughput|Hit Rate|Duration|Warp Cycles Per|Stall|Achieved|Executed Ipc|Issue Slots|sectors|Mem Busy|Max Bandwidth|inst_executed" $OUT/r/ncu/details-w$w.txt | head -60
done
xz -9 $OUT/r/ncu/*.ncu-rep 2>/dev/null
cd $OUT && tar czf r.tgz r && rm -rf r
