#!/bin/bash
# Follow-up device call to graph_check.sh on the same (still warm) machine:
# the default model travels in two halves (one per call: a call carries at
# most 64 MiB), joined here; then perplexity on the CPU and on CUDA (q8, f32),
# the default-model GPU tests, and decode tok/s with graphs on and off.
# Reuses graph_check.sh's build in /tmp/bgpu (run from the tree's root).
# Halves: `split -b 49181216 SmolLM2-135M-Instruct.Q4_1.gguf part`; partaa as
# .m/p1 for the graph_check.sh call (it copies it to /tmp/p1), partab as .m/p2
# for this one, sent within the machine's 30 s warm window.
cd "$(dirname "$0")/../.."
D=$PWD/.deps/pcre2
export LD_LIBRARY_PATH=$D/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/hearth-out}
B=/tmp/bgpu
S=$OUT/summary.txt
: >"$S"
note() { echo "$*" | tee -a "$S"; }
[ -x $B/cli/hearth-cli ] && [ -f /tmp/p1 ] || { note "no build or first half here: a fresh machine"; exit 1; }
mkdir -p /tmp/models
cat /tmp/p1 .m/p2 >/tmp/models/SmolLM2-135M-Instruct.Q4_1.gguf
note "model $(sha256sum /tmp/models/SmolLM2-135M-Instruct.Q4_1.gguf | cut -c1-16) $(stat -c %s /tmp/models/SmolLM2-135M-Instruct.Q4_1.gguf)"
F=/tmp/models/SmolLM2-135M-Instruct.Q4_1.gguf
for run in "cpu q8" "cuda q8" "cuda f32"; do
  set -- $run
  r=$(HEARTH_CUDA_GEMV=$2 timeout 120 $B/cli/hearth-cli perplexity $F --file tests/peer/data/public_domain.txt --ctx 512 \
    --device $1 --threads 16 --json 2>>$OUT/ppl_err.log | tail -1)
  note "ppl default model $1 $2: $r"
done
for rep in 1 2; do
  for g in 1 0; do
    for a in q8 f32; do
      j=$(HEARTH_CUDA_GRAPH=$g HEARTH_CUDA_GEMV=$a $B/cli/hearth-cli generate $F --device cuda --prompt "hello world" \
        --temp 0 -n 128 --json 2>>$OUT/gen_err.log | tail -1)
      note "default model graph=$g $a $(echo "$j" | python3 -c 'import json,sys; j=json.load(sys.stdin); print("decode_tps %.1f tokens %d" % (j["decode_tps"], j["generated_tokens"]))' 2>&1)"
    done
  done
done
HEARTH_MODELS_DIR=/tmp/models $B/tests/models/cuda/models_llama_cuda_test \
  --gtest_filter='CudaDefaultModel*:CudaGreedy.DefaultModel*:CudaModel.LayerTimingCost' >$OUT/default_tests.log 2>&1
note "default-model GPU tests rc=$?: $(grep -E 'PASSED|FAILED|decode step' $OUT/default_tests.log | tr '\n' ' ')"
