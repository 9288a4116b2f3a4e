#!/bin/bash
# ncu of the f16 and int8 mmq kernels at three 8B shapes (64 tokens), and of
# the decode attention (wide kernel + combine) at 4,096 and 16,384 positions
# (one sequence, f16 K/V): duration, grid (the split count), occupancy,
# instructions, stalls, memory throughput; first bench/gpu/wgmma_probe.cu.
# Issue 20, v18/v19.
cd "$(dirname "$0")/../.."
source bench/gpu/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader | tee -a "$S"
# The wgmma probe (layout of B's descriptor; wgmma vs mma.sync rates): seconds.
nvcc -O2 -std=c++17 -arch=sm_90a -o $W/wgmma_probe bench/gpu/wgmma_probe.cu >$W/probe.log 2>&1 && timeout 60 $W/wgmma_probe 2>&1 | tee -a "$S" || tail -5 $W/probe.log | tee -a "$S"
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEARTH_ENGINE_ONLY=ON -DHEARTH_CUDA_ARCHITECTURES=90 >$W/cfg.log 2>&1
cmake --build $B -j16 --target kernels_cuda_bench >$W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
note built
BENCH=$B/tests/kernels/cuda/kernels_cuda_bench
SECTIONS="--section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats --section InstructionStats --section SchedulerStats --section MemoryWorkloadAnalysis"
KEYS='Duration|Grid Size|Block Size|Achieved Occupancy|Executed Instructions |Issue Slots Busy|Warp Cycles Per Issued|No Eligible|Registers Per|Theoretical Occ|Block Limit|Dynamic Shared|L2 Cache Throughput|DRAM Throughput|L1/TEX Hit|Mem Busy|Max Bandwidth|Memory Throughput'
# --clock-control none: leave the clocks alone (the device notes, METHOD.md).
prof() { # NAME KERNEL_REGEX SKIP ARGS...
  local name=$1 k=$2 skip=$3
  shift 3
  timeout 90 ncu --clock-control none --kernel-name "regex:$k" --launch-skip $skip --launch-count 1 $SECTIONS "$@" >"$OUT/ncu_$name.txt" 2>&1
  note "ncu $name: $(grep -E "$KEYS" "$OUT/ncu_$name.txt" | tr -s ' ' | tr '\n' '|')"
}
for shape in "14336 4096 64" "28672 4096 64" "4096 14336 64"; do
  prof "f16_${shape// /x}" '^mmq_f16_kernel$' 3 $BENCH mmq $shape
  prof "q8_${shape// /x}" '^mmq_kernel$' 3 $BENCH mmq $shape
done
for ctx in 4096 16384; do
  $BENCH attn $ctx 1 | tee -a "$S"
  prof "attn_wide_$ctx" '^attn_wide_kernel$' 5 $BENCH attn $ctx 1
  prof "attn_combine_$ctx" '^attn_combine_wide_kernel$' 5 $BENCH attn $ctx 1
done
