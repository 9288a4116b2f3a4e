#!/bin/bash
# One device call for issue 20, v21: the one-token GEMV over a set of
# matrices (q/k/v, gate/up) with the RMSNorm in its prologue for widths the
# 8-bit path does not take (SmolLM2-135M's 576, Qwen2.5-0.5B's 896). Tests
# first (the fusion and GEMV tests, then the GPU suites), then decode tok/s,
# default against HEARTH_CUDA_GEMV_SET=0, interleaved, on the 135M shape
# (Q4_1, the default model's format), a Qwen2.5-0.5B shape (Q4_0) and the
# 8B shape (unchanged path: a control); then ncu's kernels per 135M step.
# Needs PCRE2 in .deps/pcre2.
cd "$(dirname "$0")/../.."
source bench/gpu/device_env.sh
T="kernels_cuda_test models_llama_cuda_test models_gemma3_cuda_test engine_runtime_cuda_test engine_backend_cuda_ops_test"
build_engine hearth-cli $T || exit 1
run_gtest kernels/cuda/kernels_cuda_test --gtest_filter='CudaFusion.*:CudaGemv*'
(timeout 240 $B/tests/kernels/cuda/kernels_cuda_test --gtest_brief=1 --gtest_filter='-CudaFusion.*:CudaGemv*' >$W/k.log 2>&1
  echo "rc $?" >>$W/k.log) &
KT=$!
for t in models/cuda/models_llama_cuda_test models/cuda/models_gemma3_cuda_test engine/runtime/engine_runtime_cuda_test \
  engine/backend/engine_backend_cuda_ops_test; do
  run_gtest $t
done
[ -f $M/smol.gguf ] || $CLI synth --shape smollm2-135m --quant Q4_1 -o $M/smol.gguf >$W/synth.log 2>&1
[ -f $M/qwen05.gguf ] || $CLI synth --shape custom --embd 896 --layers 24 --heads 14 --kv-heads 2 --ffn 4864 \
  --vocab 151936 --ctx 4096 --quant Q4_0 -o $M/qwen05.gguf >>$W/synth.log 2>&1
[ -f $M/8b.gguf ] || $CLI synth --shape llama-8b --quant Q4_0 -o $M/8b.gguf >>$W/synth.log 2>&1
wait $KT
note "kernels_cuda_test (the rest) $(tail -1 $W/k.log): $(grep -E '^\[  PASSED|^\[  FAILED|FAILED TEST' $W/k.log | tr '\n' ' ')"
grep -E "Failure|Which is|error" $W/k.log | head -8 | tee -a "$S"
cat $W/k.log >>$OUT/tests.log
gen() { # FILE LABEL ENV...
  local f=$1 k=$2
  shift 2
  v=$(env "$@" timeout 90 $CLI generate $M/$f.gguf --device cuda --temp 0 --json --prompt "hello world" -n 128 \
    2>>$W/err.log | tail -1 | python3 -c "import json,sys; j=json.load(sys.stdin); print('%.1f %s' % (j['decode_tps'], j.get('text','')[:40].encode().hex()[:16]))" 2>&1)
  note "$f $k: $v"
}
for r in 1 2 3; do
  for f in smol qwen05; do
    gen $f default HEARTH_X=1
    gen $f set=0 HEARTH_CUDA_GEMV_SET=0
  done
done
gen 8b default HEARTH_X=1
gen 8b set=0 HEARTH_CUDA_GEMV_SET=0
timeout 100 ncu --metrics gpu__time_duration.sum --csv --cache-control none --clock-control none --launch-count 2000 \
  $CLI generate $M/smol.gguf --device cuda --temp 0 --prompt "hello world" -n 4 >$OUT/ncu_smol.csv 2>$W/ncu.err
python3 - $OUT/ncu_smol.csv <<'PY' | tee -a "$S"
import csv, re, sys
from collections import Counter
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if l.startswith('"')) if r.get("Metric Name") == "gpu__time_duration.sum"]
names = [re.sub(r"\(.*$", "", r["Kernel Name"]).split("::")[-1][:40] for r in rows]
us = [float(r["Metric Value"].replace(",", "")) / 1000 for r in rows]
idx = [i for i, n in enumerate(names) if n.startswith("argmax")]
a, b = idx[-2] + 1, idx[-1] + 1
print("one 135M decode step (ncu, serialized):", b - a, "kernels, %.0f us" % sum(us[a:b]))
for n, c in Counter(names[a:b]).most_common(): print("  %4d %s" % (c, n))
PY
cp $W/err.log $OUT/ 2>/dev/null
note "done"
