#!/bin/bash
# One short device call (session 18): the GPU tests after the revert of the
# last-block merge (e02c7a4) and the stream kernel's shared limit set at
# every size, essentials first, then the 8B Q4_0 decode at batch 1 and at
# 4,096 tokens of context (which failed before the revert). Needs .deps/pcre2.
cd "$(dirname "$0")/../.."
source bench/gpu/device_env.sh
# QUICK=1 (little device time left): the attention tests and the engine's only.
if [ -n "${QUICK:-}" ]; then
  build_engine kernels_cuda_test engine_runtime_cuda_test || exit 1
  run_gtest kernels/cuda/kernels_cuda_test --gtest_filter='CudaPagedAttention.*:-*LongContextManySplits'
  run_gtest engine/runtime/engine_runtime_cuda_test
  note done
  exit 0
fi
build_engine hearth-cli kernels_cuda_test models_llama_cuda_test engine_runtime_cuda_test || exit 1
run_gtest kernels/cuda/kernels_cuda_test --gtest_filter='CudaPagedAttention.*:-*LongContextManySplits'
run_gtest engine/runtime/engine_runtime_cuda_test
run_gtest models/cuda/models_llama_cuda_test
[ -f $M/8b.gguf ] || $CLI synth --shape llama-8b --quant Q4_0 -o $M/8b.gguf >$W/synth.log 2>&1
python3 -c "print('hello world ' * 341 + 'hel')" >$W/long.txt # 4,096 tokens (the synthetic tokenizer)
gen "batch 1" --prompt "hello world" -n 128
gen "at 4,096 context" --prompt-file $W/long.txt -n 64 --ctx 4352
run_gtest kernels/cuda/kernels_cuda_test --gtest_filter='-CudaPagedAttention.*'
run_gtest kernels/cuda/kernels_cuda_test --gtest_filter='*LongContextManySplits'
cp $W/err.log $OUT/ 2>/dev/null
note done
