#!/bin/bash
# One device call for issue 20, v20: the GPU tests under the new defaults
# (f16 mmq activations from 9 rows, the stream attention kernel for chunks
# of more than two tiles, the combine over head_dim pieces), then the 8B
# Q4_0 decode at batch 1 and at 4,096 tokens of context, and hearth-bench
# concurrent at 16 and 64 streams. kernels_cuda_test runs beside the model
# and engine tests (one GPU, separate processes) to fit one call.
# Needs PCRE2 in .deps/pcre2.
cd "$(dirname "$0")/../.."
source bench/gpu/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader | tee -a "$S"
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEARTH_ENGINE_ONLY=ON -DHEARTH_CUDA_ARCHITECTURES=90 \
  >$W/cfg.log 2>&1 || { tail -30 $W/cfg.log; exit 1; }
T="kernels_cuda_test models_llama_cuda_test models_gemma3_cuda_test models_switching_cuda_test engine_runtime_cuda_test"
cmake --build $B -j16 --target hearth-cli hearth-bench $T engine_backend_cuda_ops_test >$W/build.log 2>&1 ||
  { grep -m5 -A12 -E "error|FAILED" $W/build.log; exit 1; }
note "built"
CLI=$B/cli/hearth-cli
HB=$B/bench/engine/hearth-bench
(timeout 200 $B/tests/kernels/cuda/kernels_cuda_test --gtest_brief=1 >$W/k.log 2>&1; echo "rc $?" >>$W/k.log) &
KT=$!
for t in models/cuda/models_llama_cuda_test models/cuda/models_gemma3_cuda_test models/cuda/models_switching_cuda_test \
  engine/runtime/engine_runtime_cuda_test engine/backend/engine_backend_cuda_ops_test; do
  timeout 150 $B/tests/$t --gtest_brief=1 >$W/m.log 2>&1
  note "$(basename $t) rc $?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED TEST' $W/m.log | tr '\n' ' ')"
  grep -E "Failure|Which is|error" $W/m.log | head -8 | tee -a "$S"
  cat $W/m.log >>$OUT/tests.log
done
[ -f $M/8b.gguf ] || $CLI synth --shape llama-8b --quant Q4_0 -o $M/8b.gguf >$W/synth.log 2>&1
wait $KT
note "kernels_cuda_test $(tail -1 $W/k.log): $(grep -E '^\[  PASSED|^\[  FAILED|FAILED TEST' $W/k.log | tr '\n' ' ')"
grep -E "Failure|Which is|error" $W/k.log | head -8 | tee -a "$S"
cat $W/k.log >>$OUT/tests.log
python3 -c "print('hello world ' * 341 + 'hel')" >$W/long.txt # 4,096 tokens (the synthetic tokenizer)
conc() { # STREAMS
  v=$(timeout 100 $HB concurrent $M/8b.gguf --device cuda --streams $1 --tokens 128 --json 2>>$W/err.log |
    python3 -c "import json,sys; j=json.load(sys.stdin); print('%.1f' % j['aggregate_decode_tps'])" 2>&1)
  note "8B Q4_0 $1 streams: aggregate decode $v tok/s"
}
for r in 1 2; do
  gen "batch 1" --prompt "hello world" -n 128
  gen "at 4,096 context" --prompt-file $W/long.txt -n 64 --ctx 4352
  conc 16
  conc 64
done
cp $W/err.log $OUT/ 2>/dev/null
note "done"
