#!/bin/bash
# Issue 20: greedy steps take their arg-maxes on the device (4 bytes a row
# copied back instead of n_vocab floats, no host scan of the logits). One
# device call, carry [".deps"]: the gpu preset build of the targets it runs and
# their gpu tests (FULL=1: everything and the whole gpu label), then the
# 8B Q4_0 file's batch-1 decode and 16 / 64 concurrent streams (hearth-bench
# concurrent: aggregate decode, and the per-op profile of a 64-row step) with
# HEARTH_CUDA_DEVICE_ARGMAX=0 (the logits copied back, the host's arg-max) and
# the default, interleaved REPS times (2).
cd "$(dirname "$0")/../.."
source bench/gpu/device_env.sh
C=build/gpu/cli/hearth-cli
HB=build/gpu/bench/engine/hearth-bench
cmake --preset gpu >"$OUT/cfg.log" 2>&1 || { tail -30 "$OUT/cfg.log"; exit 1; }
T="hearth-cli hearth-bench engine_backend_cuda_ops_test engine_runtime_cuda_test models_llama_cuda_test models_gemma3_cuda_test"
if [ "${FULL:-0}" = 1 ]; then T=all; fi
cmake --build build/gpu -j16 --target $T >"$OUT/build.log" 2>&1 || { grep -m8 -A10 "error" "$OUT/build.log"; exit 1; }
el "built ($T)"
($C synth --shape llama-8b --quant Q4_0 -o /tmp/8b.gguf >"$OUT/synth.log" 2>&1) &
SYN=$!
if [ "${FULL:-0}" = 1 ]; then
  ctest --test-dir build/gpu -L gpu -LE gpu-bench -j3 --output-on-failure --timeout 240 >"$OUT/ctest.log" 2>&1
  el "ctest: $(grep -E "tests passed|tests failed" "$OUT/ctest.log")"
  grep -E "\*\*\*Failed|Timeout" "$OUT/ctest.log" | head
else
  for t in engine/backend/engine_backend_cuda_ops_test engine/runtime/engine_runtime_cuda_test \
    models/cuda/models_llama_cuda_test models/cuda/models_gemma3_cuda_test; do
    timeout 200 build/gpu/tests/$t >"$OUT/$(basename $t).log" 2>&1
    el "$(basename $t) rc=$?: $(grep -E '^\[  (PASSED|FAILED)|^\[  FAILED' "$OUT/$(basename $t).log" | tr '\n' ' ')"
  done
fi
wait $SYN
for rep in $(seq 1 ${REPS:-2}); do
  for a in 0 1; do
    g=$(HEARTH_CUDA_DEVICE_ARGMAX=$a $C generate /tmp/8b.gguf --device cuda --prompt "hello world" --temp 0 -n 128 --json 2>/dev/null | tail -1)
    echo "argmax=$a rep $rep batch 1: $(echo "$g" | python3 -c 'import json,sys,hashlib; j=json.load(sys.stdin); print("decode_tps %.1f tokens %s" % (j["decode_tps"], hashlib.md5(str(j["generated_token_ids"]).encode()).hexdigest()[:10]))')"
    for n in 16 64; do
      HEARTH_CUDA_DEVICE_ARGMAX=$a timeout 120 $HB concurrent /tmp/8b.gguf --device cuda --streams $n --tokens 128 --json \
        >"$OUT/c_${a}_${n}_$rep.json" 2>/dev/null
      echo "argmax=$a rep $rep $n streams: $(python3 -c "import json; j=json.load(open('$OUT/c_${a}_${n}_$rep.json')); print('aggregate %.1f' % j['aggregate_decode_tps'])")"
    done
  done
done
for a in 0 1; do
  HEARTH_CUDA_DEVICE_ARGMAX=$a timeout 120 $HB concurrent /tmp/8b.gguf --device cuda --streams 64 --tokens 128 --profile \
    2>&1 >/dev/null | grep -E "profile:|sampling|matmul output" | sed "s/^/argmax=$a /"
done
el "done"
