#!/bin/bash
# The real models on the GPU after a CUDA change (issue 20 v16, issue 16):
# Gemma 3 270M Q4_K_M and SmolLM2-135M Q4_1 assembled from pieces carried by
# earlier calls on the same warm machine (the device has no network; a call
# carries 64 MiB): `split -b 42185504 -d -a 2 GEMMA .m/g` (6 pieces) and
# `split -b 49181216 -d -a 2 SMOLLM2 .m/s` (2), one piece a call, this script
# in the call with the last one. Then: the real-file GPU tests
# (models_gemma3_cuda_test, CudaGemma3Real included), perplexity on the GPU
# with the tensor-core prompt attention on and off (HEARTH_CUDA_ATTN_PREFILL)
# for every KV precision, against the CPU's, greedy text CPU vs GPU, and the
# prompt throughput A/B. Needs /tmp/bgpu (bench/gpu/prefill_check.sh built it).
cd "$(dirname "$0")/../.."
source bench/gpu/device_env.sh
C=$B/cli/hearth-cli
HB=$B/bench/engine/hearth-bench
D=/tmp/models
mkdir -p $D
cmake --build $B -j16 --target hearth-cli hearth-bench models_gemma3_cuda_test >"$OUT/build.log" 2>&1 ||
  { grep -m8 -A10 "error" "$OUT/build.log"; exit 1; }
el "built"
assemble() { # NAME PIECES SHA256
  cat $2 >$D/$1
  local sum
  sum=$(sha256sum $D/$1 | cut -d' ' -f1)
  [ "$sum" = "$3" ] && el "$1 ok" || { el "$1: pieces do not add up ($(stat -c %s $D/$1) bytes)"; rm -f $D/$1; }
}
assemble gemma-3-270m-q4_k_m.gguf ".m/g0[0-5]" a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818
assemble SmolLM2-135M-Instruct.Q4_1.gguf ".m/s0[0-1]" b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
export HEARTH_MODELS_DIR=$D
timeout 200 $B/tests/models/cuda/models_gemma3_cuda_test --gtest_brief=1 >"$OUT/gemma_tests.log" 2>&1
el "models_gemma3_cuda_test rc=$?: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)|FAILED TEST' "$OUT/gemma_tests.log" | tr '\n' ' ')"
grep -E "worst relative|Failure|logits row" "$OUT/gemma_tests.log" | head -12
ppl() { # FILE DEVICE KV [ENV...]
  local f=$1 d=$2 kv=$3
  shift 3
  env "$@" timeout 150 $C perplexity $D/$f --file tests/peer/data/public_domain.txt --ctx 512 --device $d --threads 16 \
    --kv $kv --json 2>>"$OUT/err.log" | tail -1 | python3 -c 'import json,sys; print("%.4f" % json.load(sys.stdin)["perplexity"])'
}
for f in SmolLM2-135M-Instruct.Q4_1.gguf gemma-3-270m-q4_k_m.gguf; do
  [ -f $D/$f ] || continue
  for kv in f16 q8_0 fp8; do
    el "$f ppl kv $kv: cpu $(ppl $f cpu $kv) | cuda $(ppl $f cuda $kv) | cuda, split-KV prompt attention \
$(ppl $f cuda $kv HEARTH_CUDA_ATTN_PREFILL=0)"
  done
  for a in 0 1; do
    el "$f prefill 512 (HEARTH_CUDA_ATTN_PREFILL=$a): $(HEARTH_CUDA_ATTN_PREFILL=$a timeout 60 $HB prefill $D/$f \
      --device cuda --tokens 512 --reps 3 --json 2>>"$OUT/err.log" | python3 -c 'import json,sys; print("%.1f" % json.load(sys.stdin)["prefill_tps"])')"
  done
  for d in cpu cuda; do
    timeout 60 $C generate $D/$f --device $d --threads 16 --prompt "The capital of France is" --temp 0 -n 48 --json \
      2>>"$OUT/err.log" | tail -1 >/tmp/g_$d.json
  done
  el "$f greedy: $(python3 -c "
import json
a, b = (json.load(open('/tmp/g_%s.json' % d))['generated_token_ids'] for d in ('cpu', 'cuda'))
n = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
print('cpu and cuda agree on the first %d of %d tokens' % (n, len(a)))")"
done
el "done"
