#!/bin/bash
# The GLU fusion's width limit (v15): the fused-kernel tests, the CUDA model
# tests, and 8B / 135M-shape decode with HEARTH_CUDA_FUSE_GLU=0 and =1 (on),
# interleaved. One device call, carry [".deps"].
cd "$(dirname "$0")/../.."
source bench/gpu/device_env.sh
C=build/gpu/cli/hearth-cli
cmake --preset gpu >"$OUT/cfg.log" 2>&1 || { tail -30 "$OUT/cfg.log"; exit 1; }
cmake --build build/gpu -j16 --target hearth-cli kernels_cuda_test models_llama_cuda_test models_gemma3_cuda_test \
  engine_runtime_cuda_test >"$OUT/build.log" 2>&1 || { grep -m8 -A10 "error" "$OUT/build.log"; exit 1; }
el "built"
($C synth --shape llama-8b --quant Q4_0 -o /tmp/8b.gguf && $C synth --shape smollm2-135m --quant Q4_1 -o /tmp/smol.gguf) \
  >"$OUT/synth.log" 2>&1 &
SYN=$!
for t in kernels/cuda/kernels_cuda_test:CudaFusion.*:CudaGemvQ8.* models/cuda/models_llama_cuda_test:* \
  models/cuda/models_gemma3_cuda_test:* engine/runtime/engine_runtime_cuda_test:*; do
  timeout 200 build/gpu/tests/${t%%:*} --gtest_brief=1 --gtest_filter="${t#*:}" >"$OUT/$(basename ${t%%:*}).log" 2>&1
  el "$(basename ${t%%:*}) rc=$?: $(grep -E '^\[  (PASSED|FAILED)|^\[  FAILED' "$OUT/$(basename ${t%%:*}).log" | tr '\n' ' ')"
done
wait $SYN
for rep in 1 2; do
  for f in 8b smol; do
    for g in 0 1; do
      j=$(HEARTH_CUDA_FUSE_GLU=$g $C generate /tmp/$f.gguf --device cuda --prompt "hello world" --temp 0 -n 128 --json 2>/dev/null | tail -1)
      echo "$f fuse_glu=$g rep $rep: $(echo "$j" | python3 -c 'import json,sys,hashlib; j=json.load(sys.stdin); print("decode_tps %.1f tokens %s" % (j["decode_tps"], hashlib.md5(str(j["generated_token_ids"]).encode()).hexdigest()[:10]))')"
    done
  done
done
el "done"
