#!/bin/bash
# One device call for issue 20, v17: the numerics of mmq's f16 activations.
# Builds kernels_cuda_test and hearth-cli (engine-only, /tmp/bgpu), runs the
# mmq tests (a 512-token step and the error-bias check included), then
# perplexity of a synthetic llama-1b Q4_0 file on CUDA with windows of 512
# tokens (every product through mmq: HEARTH_CUDA_MMQ_MAX_TOKENS=512) and of
# 64 tokens (mmq's own range), with f16 activations (HEARTH_CUDA_MMQ_F16=2),
# 8-bit ones (=0) and no mmq (HEARTH_CUDA_MMQ=0: dequantize + cuBLAS f16);
# last `kernels_cuda_bench mmq` (f16 / int8 / cuBLAS per shape).
cd "$(dirname "$0")/../.."
source bench/gpu/device_env.sh
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEARTH_ENGINE_ONLY=ON -DHEARTH_CUDA_ARCHITECTURES=90 \
  >$W/cfg.log 2>&1 || { tail -30 $W/cfg.log; exit 1; }
cmake --build $B -j16 --target hearth-cli kernels_cuda_test kernels_cuda_bench >$W/build.log 2>&1 ||
  { grep -m5 -A12 -E "error|FAILED" $W/build.log; exit 1; }
note "built"
CLI=$B/cli/hearth-cli
[ -f $M/1b.gguf ] || $CLI synth --shape llama-1b --quant Q4_0 -o $M/1b.gguf >$W/synth.log 2>&1 &
timeout 120 $B/tests/kernels/cuda/kernels_cuda_test --gtest_filter='CudaMmq*' >$OUT/kt.log 2>&1
note "CudaMmq rc $?: $(grep -E '^\[  PASSED|^\[  FAILED|rms error|Failure' $OUT/kt.log | tr '\n' ' ')"
wait
head -c 8000 tests/peer/data/public_domain.txt >$W/ppl.txt
for ctx in 512 64; do
  for run in "1 2" "1 0" "0 0"; do
    set -- $run
    r=$(HEARTH_CUDA_MMQ=$1 HEARTH_CUDA_MMQ_MAX_TOKENS=512 HEARTH_CUDA_MMQ_F16=$2 timeout 60 $CLI perplexity $M/1b.gguf \
      --file $W/ppl.txt --ctx $ctx --device cuda --json 2>>$W/err.log | tail -1)
    note "ppl ctx $ctx mmq=$1 f16=$2: $(echo "$r" | python3 -c 'import json,sys; print(json.load(sys.stdin)["perplexity"])' 2>&1)"
  done
done
timeout 200 $B/tests/kernels/cuda/kernels_cuda_bench mmq >$OUT/kbench.txt 2>&1
note "kernels_cuda_bench mmq rc $?"
note "done"
