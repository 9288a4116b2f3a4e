#!/bin/bash
# ncu of the decode attention (wide kernel, then the combine) at 4,096 and
# 16,384 positions, one sequence, f16 K/V, after bench/gpu/wgmma_probe.cu; on
# a warm machine after ncu_mmq_f16.sh (its build in /tmp/bgpu). Issue 20, v19.
cd "$(dirname "$0")/../.."
source bench/gpu/device_env.sh
nvcc -O2 -std=c++17 -arch=sm_90a -o $W/wgmma_probe bench/gpu/wgmma_probe.cu >$W/probe.log 2>&1 && timeout 60 $W/wgmma_probe 2>&1 | tee -a "$S"
cmake --build $B -j16 --target kernels_cuda_bench >$W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
BENCH=$B/tests/kernels/cuda/kernels_cuda_bench
SECTIONS="--section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats --section InstructionStats --section SchedulerStats --section MemoryWorkloadAnalysis"
for ctx in 4096 16384; do
  $BENCH attn $ctx 1 | tee -a "$S"
  for k in attn_wide_kernel attn_combine_wide_kernel; do
    timeout 60 ncu --clock-control none --kernel-name "regex:^$k\$" --launch-skip 5 --launch-count 1 $SECTIONS $BENCH attn $ctx 1 >"$OUT/ncu_${k}_$ctx.txt" 2>&1
    note "$k $ctx: $(grep -E 'Duration|Grid Size|Block Size|Achieved Occ|No Eligible|Warp Cycles Per Issued|DRAM Throughput|Registers Per' $OUT/ncu_${k}_$ctx.txt | tr -s ' ' | tr '\n' '|')"
  done
done
