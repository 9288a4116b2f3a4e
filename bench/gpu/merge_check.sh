#!/bin/bash
# One device call for issue 20, v21b: the decode attention's chunks merged
# by their last block (PagedAttentionParams::tickets; the CUDA backend with
# HEARTH_CUDA_ATTN_FUSED_COMBINE=1), written in session 17 without a GPU.
# Tests first (the attention tests, then the model and engine suites with
# the switch on), the attention micro-benchmark's merged rows, then decode
# tok/s with and without the switch, interleaved: the 135M shape, the 8B at
# batch 1 and at 4,096 tokens of context. Needs PCRE2 in .deps/pcre2.
cd "$(dirname "$0")/../.."
source bench/gpu/device_env.sh
T="kernels_cuda_test kernels_cuda_bench models_llama_cuda_test engine_runtime_cuda_test"
build_engine hearth-cli $T || exit 1
run_gtest kernels/cuda/kernels_cuda_test --gtest_filter='CudaPagedAttention.*'
note "with HEARTH_CUDA_ATTN_FUSED_COMBINE=1:"
for t in models/cuda/models_llama_cuda_test engine/runtime/engine_runtime_cuda_test; do
  HEARTH_CUDA_ATTN_FUSED_COMBINE=1 run_gtest $t
done
timeout 120 $B/tests/kernels/cuda/kernels_cuda_bench attn >$OUT/attn_bench.txt 2>&1
grep -E "wd\+m|st\+m|wide|strm" $OUT/attn_bench.txt | grep -E "ctx +(256|4096) " | tail -16 | tee -a "$S"
[ -f $M/smol.gguf ] || $CLI synth --shape smollm2-135m --quant Q4_1 -o $M/smol.gguf >$W/synth.log 2>&1
[ -f $M/8b.gguf ] || $CLI synth --shape llama-8b --quant Q4_0 -o $M/8b.gguf >>$W/synth.log 2>&1
python3 -c "print('hello world ' * 341 + 'hel')" >$W/long.txt # 4,096 tokens (the synthetic tokenizer)
gen() { # LABEL FILE ENV -- ARGS...
  local k=$1 f=$2 e=$3
  shift 4
  v=$(env $e timeout 90 $CLI generate $M/$f.gguf --device cuda --temp 0 --json "$@" 2>>$W/err.log | tail -1 |
    python3 -c "import json,sys; j=json.load(sys.stdin); print('%.1f %s' % (j['decode_tps'], j['text'][:40].encode().hex()[:16]))" 2>&1)
  note "$f $k: $v"
}
for r in 1 2 3; do
  for e in HEARTH_X=1 HEARTH_CUDA_ATTN_FUSED_COMBINE=1; do
    gen "$e" smol $e -- --prompt "hello world" -n 128
    gen "$e" 8b $e -- --prompt "hello world" -n 128
    gen "$e 4k" 8b $e -- --prompt-file $W/long.txt -n 64 --ctx 4352
  done
done
cp $W/err.log $OUT/ 2>/dev/null
note "done"
