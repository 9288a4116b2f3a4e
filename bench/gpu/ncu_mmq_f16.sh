#!/bin/bash
# ncu of the f16 mmq kernel at two 8B shapes (64 tokens): duration, grid
# (the split count), occupancy, instructions, stalls. Issue 20, v18.
cd "$(dirname "$0")/../.."
source bench/gpu/device_env.sh
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEARTH_ENGINE_ONLY=ON -DHEARTH_CUDA_ARCHITECTURES=90 >$W/cfg.log 2>&1
cmake --build $B -j16 --target kernels_cuda_bench >$W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
note built
# --clock-control none: leave the clocks alone (the device notes, METHOD.md).
for k in mmq_f16_kernel mmq_kernel; do
for shape in "14336 4096 64" "28672 4096 64" "4096 14336 64"; do
  timeout 90 ncu --clock-control none --kernel-name "regex:^$k\$" --launch-skip 3 --launch-count 1 --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats --section InstructionStats --section SchedulerStats --section MemoryWorkloadAnalysis $B/tests/kernels/cuda/kernels_cuda_bench mmq $shape > "$OUT/ncu_${k}_${shape// /x}.txt" 2>&1
  note "ncu $k $shape: $(grep -E 'Duration|Grid Size|Achieved Occupancy|Executed Instructions |Issue Slots Busy|Warp Cycles Per Issued|No Eligible|Registers Per|Theoretical Occ|Block Limit Shared|Dynamic Shared|L2 Cache Throughput|DRAM Throughput|L1/TEX Hit|Mem Busy|Max Bandwidth' "$OUT/ncu_${k}_${shape// /x}.txt" | tr -s ' ' | tr '\n' '|')"
done
done
