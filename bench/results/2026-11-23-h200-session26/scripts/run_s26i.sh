#!/bin/bash
# session 26, call 9: where spawn_many's L2 writes come from (~95 sectors per tiny task): Nsight Compute's memory
# tables by space (global, local, shared) at all worker warps, prof_spawn as in call 7
export LD_LIBRARY_PATH=$PWD/build/cuda/bench
mkdir -p $OUT/r/ncu-spaces
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu | head -1)
cd build/cuda/bench
M=l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_local_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_atom.sum,smsp__inst_executed_op_local_st.sum,smsp__inst_executed_op_local_ld.sum,smsp__inst_executed_op_global_st.sum,smsp__inst_executed_op_global_ld.sum
WEFT_PROF_DEFER=1 timeout 240 $NCU --clock-control none --replay-mode application -k regex:weft_worker \
  --section MemoryWorkloadAnalysis_Tables --metrics $M -o $OUT/r/ncu-spaces/spawn-w0 ./prof_spawn 10000000 -1 0 4 > $OUT/r/ncu-spaces/ncu.log 2>&1
echo "ncu rc=$?"; tail -3 $OUT/r/ncu-spaces/ncu.log
$NCU --import $OUT/r/ncu-spaces/spawn-w0.ncu-rep --page details > $OUT/r/ncu-spaces/details.txt 2>&1
$NCU --import $OUT/r/ncu-spaces/spawn-w0.ncu-rep --page raw --csv > $OUT/r/ncu-spaces/raw.csv 2>&1
grep -E "sum|Local|Global|Shared" $OUT/r/ncu-spaces/details.txt | head -60
xz -9 $OUT/r/ncu-spaces/*.ncu-rep 2>/dev/null
cd $OUT && tar czf r.tgz r && rm -rf r
