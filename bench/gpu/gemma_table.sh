#!/bin/bash
# Gemma 3 270M (the real Q4_K_M file, 253 MB) on the GPU: the per-model
# format x KV table (bench/format_table.sh on CUDA), its CPU perplexities for
# the CUDA-vs-CPU comparison, greedy text on both devices, and the real-file
# GPU test (CudaGemma3Real.*). The device has no network and a call carries
# at most 64 MiB, so the file travels in 6 pieces of 42,185,504 bytes
# (`split -b 42185504 -d -a 2 FILE .m/g`), one per call on the same warm
# machine: calls 1-5 carry .m/g00 .. .m/g04 (this script with PHASE=piece
# only lists what has arrived), call 6 carries .m/g05 and runs PHASE=table.
# Needs a Hearth build: /tmp/bgpu (bench/gpu/peer_table.sh left it) or
# build/gpu (built here otherwise).
cd "$(dirname "$0")/../.."
source bench/gpu/device_env.sh
if [ "${PHASE:-table}" = piece ]; then
  ls -la .m
  exit 0
fi
B=/tmp/bgpu
if [ ! -x $B/cli/hearth-cli ]; then
  B=build/gpu
  cmake --preset gpu >"$OUT/cfg.log" 2>&1 || { tail -30 "$OUT/cfg.log"; exit 1; }
  cmake --build $B -j16 --target hearth-cli hearth-bench models_gemma3_cuda_test >"$OUT/build.log" 2>&1 ||
    { grep -m8 -A10 "error" "$OUT/build.log"; exit 1; }
  el "built"
fi
cmake --build $B -j16 --target models_gemma3_cuda_test >"$OUT/build_test.log" 2>&1 || el "test build failed"
C=$B/cli/hearth-cli
F=/tmp/models/gemma-3-270m-q4_k_m.gguf
mkdir -p /tmp/models
cat .m/g0[0-5] >$F
sum=$(sha256sum $F | cut -d' ' -f1)
want=a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818
[ "$sum" = $want ] || { el "pieces do not add up: $(stat -c %s $F) bytes, sha256 $sum"; ls -la .m; exit 1; }
el "model ok (sha256 ${sum:0:16})"
export HEARTH_MODELS_DIR=/tmp/models
timeout 200 $B/tests/models/cuda/models_gemma3_cuda_test --gtest_brief=1 >"$OUT/gemma_tests.log" 2>&1
el "models_gemma3_cuda_test rc=$?: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$OUT/gemma_tests.log" | tr '\n' ' ')"
MODELS=gemma3-270m-q4_k_m HEARTH_BENCH_THREADS=16 bash bench/format_table.sh $B cuda | tee "$OUT/gemma_cuda.md"
el "format table (cuda)"
for kv in f16 q8_0 fp8; do
  r=$(timeout 120 $C perplexity $F --file tests/peer/data/public_domain.txt --ctx 512 --device cpu --threads 16 --kv $kv \
    --json 2>/dev/null | tail -1 | python3 -c 'import json,sys; print("%.4f" % json.load(sys.stdin)["perplexity"])')
  echo "cpu perplexity kv $kv: $r"
done
for d in cpu cuda; do
  timeout 60 $C generate $F --device $d --threads 16 --prompt "The capital of France is" --temp 0 -n 48 --json \
    2>/dev/null | tail -1 >/tmp/g_$d.json
  python3 -c "import json; j=json.load(open('/tmp/g_$d.json')); print('$d greedy: decode %.1f tok/s, %r' % (j['decode_tps'], j['text']))"
done
python3 -c "
import json
a, b = (json.load(open('/tmp/g_%s.json' % d))['generated_token_ids'] for d in ('cpu', 'cuda'))
n = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
print('greedy tokens: cpu and cuda agree on the first %d of %d' % (n, len(a)))"
el "done"
