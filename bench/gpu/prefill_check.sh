#!/bin/bash
# One device call for issue 20, v16: the tensor-core prompt attention
# (kernels/cuda/attention_prefill.cu) and 512-token steps on the GPU.
# Builds the engine-only targets in /tmp/bgpu (kept for later calls on the
# same warm machine), runs the attention tests (plain and under
# compute-sanitizer memcheck), the other GPU tests, then an A/B of prompt
# throughput (hearth-bench prefill) over HEARTH_CUDA_ATTN_PREFILL=0/1 x
# --max-batch-tokens 256/512 on the 8B-shape files at 512 and 4,096 tokens,
# and the 8-turn follow-up TTFT (hearth-bench multiturn) with and without the
# new kernel. With .llama/llama.tgz carried it first starts llama.cpp's build
# in a session of its own (it outlives this call: bench/gpu/peer_table.sh in
# the next call finds it built). Needs PCRE2 in .deps/pcre2 (merged_check.sh).
# PHASES: any of "build tests ab multiturn" (default all).
cd "$(dirname "$0")/../.."
source bench/gpu/device_env.sh
has() { [[ " ${PHASES:-build tests ab multiturn} " == *" $1 "* ]]; }

note "$(start_llama_build llama-bench llama-batched-bench)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader | tee -a "$S"

if has build; then
  cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEARTH_ENGINE_ONLY=ON -DHEARTH_CUDA_ARCHITECTURES=90 \
    >$W/cfg.log 2>&1 || { tail -30 $W/cfg.log; exit 1; }
  cmake --build $B -j16 --target hearth-cli hearth-bench kernels_cuda_test kernels_cuda_bench models_llama_cuda_test \
    models_gemma3_cuda_test engine_runtime_cuda_test engine_backend_cuda_ops_test >$W/build.log 2>&1 ||
    { grep -m5 -A12 -E "error|FAILED" $W/build.log; exit 1; }
  note "built"
fi
CLI=$B/cli/hearth-cli
HB=$B/bench/engine/hearth-bench
[ -f $M/8b.gguf ] || (
  $CLI synth --shape llama-8b --quant Q4_0 -o $M/8b.gguf
  $CLI synth --shape llama-8b --quant Q4_K_M -o $M/8bk.gguf
  $CLI synth --shape smollm2-135m --quant Q4_1 -o $M/smol.gguf
) >$W/synth.log 2>&1 &
SYN=$!

if has tests; then
  KT=$B/tests/kernels/cuda/kernels_cuda_test
  timeout 150 $KT --gtest_filter='CudaPrefillAttention.*:CudaPagedAttention.*' >$W/attn.log 2>&1
  note "attention tests rc $?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED TEST' $W/attn.log | tr '\n' ' ')"
  grep -E "Failure|Which is|error|Expected|token [0-9]" $W/attn.log | head -16 | tee -a "$S"
  cp $W/attn.log $OUT/
  if grep -q "FAILED.*CudaPrefillAttention" $W/attn.log; then
    export HEARTH_CUDA_ATTN_PREFILL=0
    note "prompt attention tests failed: the rest runs with HEARTH_CUDA_ATTN_PREFILL=0"
  fi
  timeout 150 compute-sanitizer --tool memcheck --print-limit 5 $KT \
    --gtest_filter='CudaPrefillAttention.PromptsWith*:CudaPrefillAttention.SeveralSequences*' >$W/memcheck.log 2>&1
  note "memcheck rc $?: $(grep -E 'ERROR SUMMARY|^\[  PASSED|^\[  FAILED' $W/memcheck.log | tr '\n' ' ')"
  timeout 150 $KT --gtest_brief=1 --gtest_filter='-CudaPrefillAttention.*:CudaPagedAttention.*' >$W/kt.log 2>&1
  note "kernels_cuda_test (the rest) rc $?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED TEST' $W/kt.log | tr '\n' ' ')"
  for t in models/cuda/models_llama_cuda_test models/cuda/models_gemma3_cuda_test \
    engine/runtime/engine_runtime_cuda_test engine/backend/engine_backend_cuda_ops_test; do
    timeout 150 $B/tests/$t --gtest_brief=1 >$W/t.log 2>&1
    note "$(basename $t) rc $?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED TEST' $W/t.log | tr '\n' ' ')"
    grep -E "Failure|Which is|worst relative" $W/t.log | head -8 | tee -a "$S"
    cat $W/t.log >>$W/kt.log
  done
  cp $W/kt.log $OUT/
fi
wait $SYN

pf() { # LABEL FILE TOKENS BATCH [ENV...]: hearth-bench prefill, median prompt tok/s
  local label=$1 f=$2 n=$3 mbt=$4
  shift 4
  local v
  v=$(env "$@" timeout 120 $HB prefill $M/$f.gguf --device cuda --tokens $n --reps 3 --max-batch-tokens $mbt --json \
    2>>$W/hb_err.log | python3 -c "import json,sys; j=json.load(sys.stdin); print('%.1f ttft %.1f ms' % (j['prefill_tps'], j['ttft_ms']))" 2>&1)
  note "prefill $label $f $n tokens, $mbt a step: $v"
}
late() { [ $(($(date +%s) - t0)) -gt ${LATE:-470} ]; }  # keep the call inside its 600 s
if has ab; then
  for r in $(seq ${REPS:-1}); do
    for f in 8b 8bk; do
      pf v15 $f 512 256 HEARTH_CUDA_ATTN_PREFILL=0
      pf attn $f 512 256 HEARTH_CUDA_ATTN_PREFILL=1
      pf step $f 512 512 HEARTH_CUDA_ATTN_PREFILL=0
      pf new $f 512 512 HEARTH_CUDA_ATTN_PREFILL=1
    done
    late && break
    pf v15 8b 4096 256 HEARTH_CUDA_ATTN_PREFILL=0
    pf new 8b 4096 512 HEARTH_CUDA_ATTN_PREFILL=1
  done
  pf v15 smol 512 256 HEARTH_CUDA_ATTN_PREFILL=0
  pf new smol 512 512 HEARTH_CUDA_ATTN_PREFILL=1
  pf new 8b 8192 512 HEARTH_CUDA_ATTN_PREFILL=1
  # Same greedy tokens with and without the new kernel (a 600-token prompt then 32 tokens).
  python3 -c "print('hello world ' * 300, end='')" >$W/p600.txt
  for a in 0 1; do
    HEARTH_CUDA_ATTN_PREFILL=$a timeout 90 $CLI generate $M/8b.gguf --device cuda --temp 0 --json \
      --prompt-file $W/p600.txt -n 32 2>>$W/hb_err.log | tail -1 >$W/g$a.json
  done
  note "greedy ids with/without the prompt kernel: $(python3 -c "
import json
a, b = (json.load(open('$W/g%d.json' % i))['generated_token_ids'] for i in (0, 1))
print('same' if a == b else 'DIFFER at %d' % next(i for i, (x, y) in enumerate(zip(a, b)) if x != y), len(a))")"
fi
if has multiturn && ! late; then
  for a in 1 0; do
    HEARTH_CUDA_ATTN_PREFILL=$a timeout 200 $HB multiturn $M/8b.gguf --device cuda --ctx 16384 --json \
      >$W/mt$a.json 2>>$W/hb_err.log
    note "multiturn HEARTH_CUDA_ATTN_PREFILL=$a: $(python3 -c "
import json
j = json.load(open('$W/mt$a.json'))
print(' | '.join('t%d %d/%d tok on %.1f off %.1f ms' % (t['turn'], t['prompt_tokens'], t['cached_tokens'], t['ttft_ms_cache_on'], t['ttft_ms_cache_off']) for t in j))" 2>&1)"
  done
fi
cp $W/hb_err.log $OUT/ 2>/dev/null
note "llama.cpp build: $(cat /tmp/llama.done 2>/dev/null || echo running)"
