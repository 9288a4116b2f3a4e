#!/bin/bash
# Issue 16's KV precisions on the GPU (q8_0 and calibrated fp8 on CUDA), in two
# back-to-back device calls on one warm machine:
#   call 1: `PHASE=1 bash bench/gpu/kv_check.sh`, carry [".deps", ".m/partaa"]:
#     gpu preset build, the gpu label (kernel, backend-op and model tests),
#     `kernels_cuda_bench attn` (f16 / fp8 / q8_0 decode attention), then the
#     8B Q4_0 file's decode at short and 4,096-token context and its warm
#     512-token prefill for each KV precision, with the memory generate reports.
#   (PHASE=1b on the same warm machine: only the 8B measurements again)
#   call 2: `PHASE=2 bash bench/gpu/kv_check.sh`, carry [".deps", ".m/partab"]:
#     joins the default model (SmolLM2 135M Q4_1; a call carries 64 MiB at most:
#     `split -b 49181216` in .m), runs bench/format_table.sh on CUDA over it
#     (weights as stored and as Q4_0 x f16 / q8_0 / fp8: perplexity, decode,
#     prefill, memory), and the same perplexities on the machine's CPU.
# PCRE2 unpacked in .deps/pcre2 (see merged_check.sh).
cd "$(dirname "$0")/../.."
source bench/gpu/device_env.sh
C=build/gpu/cli/hearth-cli
BENCH=build/gpu/bench/engine/hearth-bench

if [ "${PHASE:-1}" = 1 ] || [ "${PHASE:-1}" = 1b ]; then
  [ "${PHASE:-1}" = 1b ] && [ -x $C ] && [ -f /tmp/8b.gguf ] || {
  cp .m/partaa /tmp/p1
  cmake --preset gpu >"$OUT/cfg.log" 2>&1 || { tail -30 "$OUT/cfg.log"; exit 1; }
  cmake --build build/gpu -j16 >"$OUT/build.log" 2>&1 || { grep -m8 -A10 "error" "$OUT/build.log"; exit 1; }
  el "built"
  ($C synth --shape llama-8b --quant Q4_0 -o /tmp/8b.gguf >"$OUT/synth.log" 2>&1) &
  SYN=$!
  ctest --test-dir build/gpu -L gpu -LE gpu-bench -j3 --output-on-failure --timeout 240 >"$OUT/ctest.log" 2>&1
  el "ctest"
  grep -E "tests passed|tests failed|\*\*\*Failed|Not Run|Timeout" "$OUT/ctest.log" | head -30
  build/gpu/tests/kernels/cuda/kernels_cuda_test --gtest_filter='CudaPagedAttention*:CudaStoreKv*:CudaFusion.Rope*' \
    >"$OUT/kv_kernels.log" 2>&1
  el "kv kernel tests rc=$?: $(grep -cE '^\[       OK' "$OUT/kv_kernels.log") ok, $(grep -E '^\[  (PASSED|FAILED)' "$OUT/kv_kernels.log" | tr '\n' ' ')"
  build/gpu/tests/engine/backend/engine_backend_cuda_ops_test --gtest_filter='*KvPrecision*' >"$OUT/ops.log" 2>&1
  el "backend ops (KV precisions) rc=$?: $(grep -E '^\[  (PASSED|FAILED)|Failure|nmse' "$OUT/ops.log" | head -8 | tr '\n' ' ')"
  timeout 60 build/gpu/tests/kernels/cuda/kernels_cuda_bench attn >"$OUT/attn_bench.txt" 2>&1
  grep -E "4096" "$OUT/attn_bench.txt" | grep -E "seqs  1 ctx   4096 split .*\(|seqs 16" | head -12
  wait $SYN
  }
  el "8B file ready"
  python3 - "$C" "$BENCH" "$OUT" <<'EOF'
import json, subprocess, sys
cli, bench, out = sys.argv[1:4]
def last_json(args, timeout=150):
    p = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        return {"error": p.stderr[-300:]}
    try:  # the benches print one multi-line object
        return json.loads(p.stdout)
    except ValueError:
        lines = [l for l in p.stdout.strip().splitlines() if l.startswith("{")]
        return json.loads(lines[-1]) if lines else {"error": p.stdout[-300:]}
long_prompt = "hello world " * 334  # 4,009 tokens
open("/tmp/long.txt", "w").write(long_prompt)
rows = []
for rep in range(2):
    for kv in ["f16", "q8_0", "fp8"]:
        short = last_json([cli, "generate", "/tmp/8b.gguf", "--device", "cuda", "--kv", kv, "--prompt", "hello world",
                           "--temp", "0", "-n", "128", "--json"])
        long = last_json([cli, "generate", "/tmp/8b.gguf", "--device", "cuda", "--kv", kv, "--prompt-file", "/tmp/long.txt",
                          "--ctx", "4352", "--temp", "0", "-n", "64", "--json"])
        pre = last_json([bench, "prefill", "/tmp/8b.gguf", "--device", "cuda", "--kv", kv, "--tokens", "512", "--reps", "3",
                         "--json"]) if rep == 0 else {}
        r = {"kv": kv, "rep": rep, "decode_tps": short.get("decode_tps"), "decode_tps_4k": long.get("decode_tps"),
             "prefill_4k_tps": long.get("prefill_tps"), "prefill_512_warm_tps": pre.get("prefill_tps"),
             "memory_4k": long.get("memory"), "kv_precision": long.get("kv_precision"),
             "tokens_same_as_f16": None, "errors": [x["error"] for x in (short, long, pre) if "error" in x]}
        r["_tokens"] = short.get("generated_token_ids")
        rows.append(r)
base = {r["rep"]: r["_tokens"] for r in rows if r["kv"] == "f16"}
for r in rows:
    t, b = r.pop("_tokens"), base.get(r["rep"])
    if t and b:
        same = 0
        while same < min(len(t), len(b)) and t[same] == b[same]:
            same += 1
        r["tokens_same_as_f16"] = same
    print(json.dumps(r))
json.dump(rows, open(out + "/kv_8b.json", "w"), indent=1)
EOF
  el "phase 1 done"
else
  [ -x $C ] && [ -f /tmp/p1 ] || { echo "no build or first half here: a fresh machine"; exit 1; }
  mkdir -p /tmp/models
  cat /tmp/p1 .m/partab >/tmp/models/SmolLM2-135M-Instruct.Q4_1.gguf
  el "model $(sha256sum /tmp/models/SmolLM2-135M-Instruct.Q4_1.gguf | cut -c1-16)"
  export HEARTH_MODELS_DIR=/tmp/models
  MODELS=default HEARTH_BENCH_THREADS=16 bash bench/format_table.sh build/gpu cuda | tee "$OUT/format_cuda.md"
  el "format table (cuda)"
  for kv in f16 q8_0 fp8; do
    r=$(timeout 120 $C perplexity /tmp/models/SmolLM2-135M-Instruct.Q4_1.gguf --file tests/peer/data/public_domain.txt \
      --ctx 512 --device cpu --threads 16 --kv $kv --json 2>/dev/null | tail -1)
    echo "cpu perplexity kv $kv: $r"
  done
  HEARTH_MODELS_DIR=/tmp/models build/gpu/tests/models/cuda/models_llama_cuda_test \
    --gtest_filter='CudaDefaultModel*:CudaGreedy.DefaultModel*' >"$OUT/default_tests.log" 2>&1
  el "default-model GPU tests rc=$?: $(grep -E '^\[  (PASSED|FAILED)' "$OUT/default_tests.log" | tr '\n' ' ')"
fi
