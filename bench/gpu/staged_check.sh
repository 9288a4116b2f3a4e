#!/bin/bash
# One device call for issue 20 (staged q8 GEMV): build only hearth-cli, the CUDA kernel tests, the
# kernel benchmark and the synthetic-model CUDA test; run the kernel tests (CudaGemvQ8.* with the new
# StagedEqualsDirect / StagedWhereItApplies), `kernels_cuda_bench staged` (direct loads vs weights
# staged through shared memory, GB/s against the copy ceiling), the 8B Q4_0 decode with
# HEARTH_CUDA_GEMV_STAGED=0 / the default / HEARTH_CUDA_GEMV_STAGED_BLOCKS=1 interleaved (two runs
# each), the models' CPU-vs-CUDA test. Needs PCRE2 in .deps/pcre2 (see merged_check.sh). Run from the tree's
# root (or a copy of it) as `bash bench/gpu/staged_check.sh`; prints a summary last.
cd "$(dirname "$0")/../.."
D=$PWD/.deps/pcre2
export PKG_CONFIG_SYSROOT_DIR=$D PKG_CONFIG_PATH=$D/usr/lib/x86_64-linux-gnu/pkgconfig
export LD_LIBRARY_PATH=$D/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/hearth-out}
W=/tmp/hw  # logs; the few that matter are copied to $OUT at the end (8 files come back)
mkdir -p $W $OUT
LIMIT=${LIMIT:-320}
B=/tmp/bgpu
S=$OUT/summary.txt
: >"$S"
t0=$(date +%s)
el() { echo $(($(date +%s) - t0)); }
note() { echo "$*" | tee -a "$S"; }
left() { [ $(($(date +%s) - t0)) -lt $((LIMIT - $1)) ]; }
rem() { r=$((LIMIT - $(date +%s) + t0 - 10)); [ $r -gt $1 ] && r=$1; [ $r -lt 5 ] && r=5; echo $r; }
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEARTH_ENGINE_ONLY=ON -DHEARTH_CUDA_ARCHITECTURES=90 \
  >$W/cfg.log 2>&1 || { tail -30 $W/cfg.log; exit 1; }
cmake --build $B -j16 --target hearth-cli kernels_cuda_test kernels_cuda_bench >$W/build.log 2>&1 ||
  { grep -m5 -A12 -E "error|FAILED" $W/build.log; exit 1; }
note "built at $(el) s"
cmake --build $B -j6 --target models_llama_cuda_test >$W/build2.log 2>&1 &
BUILD2=$!
CLI=$B/cli/hearth-cli
($CLI synth --shape llama-8b --quant Q4_0 -o /tmp/8b.gguf >$W/synth.log 2>&1;
  $CLI synth --shape llama-8b --quant Q4_K_M -o /tmp/8bk.gguf >>$W/synth.log 2>&1) &
SYN=$!
timeout 90 $B/tests/kernels/cuda/kernels_cuda_test --gtest_brief=1 --gtest_filter='CudaGemv*' >$W/kernels_test.log 2>&1
note "kernels_cuda_test CudaGemv* rc $? at $(el) s: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED TEST' $W/kernels_test.log | tr '\n' ' ')"
cuobjdump -sass $B/kernels/CMakeFiles/hearth_kernels.dir/cuda/gemv_q8.cu.o >$W/sass.txt 2>&1
python3 - $W/sass.txt <<'PY' | tee -a "$S"
import re, sys
from collections import Counter
parts = re.split(r"\n\s*Function : ", open(sys.argv[1]).read())[1:]
for kind in ("staged", "direct"):
    c, n = Counter(), 0
    for p in parts:
        if ("gemv_q8_staged_kernel" in p.split("\n", 1)[0]) == (kind == "staged") and "gemv_q8" in p.split("\n", 1)[0]:
            n += 1
            c.update(re.findall(r"\b(UBLKCP|SYNCS\.\w+|LDS\.128|LDG\.E\.128\S*|LDL|STL|IDP\.4A\S*)", p))
    print("sass", kind, n, "kernels:", dict(c))
PY
wait $SYN
wait $BUILD2  # no compiler beside the timed runs
note "synth and the models test built at $(el) s"
# A/B: direct loads (STAGED=0), the default, staged with 1 block per SM (the default since call 2 of v11;
# it chose blocks per SM by shape before).
CFGS="direct:HEARTH_CUDA_GEMV_STAGED=0 default:HEARTH_CUDA_NONE=1 b1:HEARTH_CUDA_GEMV_STAGED_BLOCKS=1"
for r in 1 2; do
  for c in $CFGS; do
    n=${c%%:*}
    env ${c#*:} timeout 60 $CLI generate /tmp/8b.gguf --device cuda --prompt "hello world" --temp 0 \
      -n 128 --json 2>>$W/gen_err.log | tail -1 >$W/gen_${n}_$r.json
    note "8B Q4_0 $n run $r: $(python3 -c "import json; j=json.load(open('$W/gen_${n}_$r.json')); print('decode_tps %.1f prefill_tps %.1f' % (j['decode_tps'], j['prefill_tps']))" 2>&1)"
  done
done
python3 - "$W" <<'PY' | tee -a "$S"
import json, sys
o = sys.argv[1]
t = [json.load(open(f"{o}/gen_{n}_{r}.json")).get("text") for n in ("direct", "default", "b1") for r in (1, 2)]
print("greedy text identical across all six runs:", len(set(t)) == 1)
PY
timeout 100 $B/tests/kernels/cuda/kernels_cuda_bench staged >$OUT/bench_staged.txt 2>&1
note "kernels_cuda_bench staged rc $? at $(el) s"
timeout $(rem 100) $B/tests/kernels/cuda/kernels_cuda_test --gtest_brief=1 --gtest_filter='-CudaGemv*' >$W/kernels_test2.log 2>&1
note "kernels_cuda_test the rest rc $? at $(el) s: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED TEST' $W/kernels_test2.log | tr '\n' ' ')"
if left 15; then
  timeout $(rem 40) $B/tests/models/cuda/models_llama_cuda_test --gtest_brief=1 >$W/models_test.log 2>&1
  note "models_llama_cuda_test rc $? at $(el) s: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED TEST' $W/models_test.log | tr '\n' ' ')"
fi
if left 25; then
  for r in 1 2; do
    for st in 0 1; do
      HEARTH_CUDA_GEMV_STAGED=$st timeout 60 $CLI generate /tmp/8bk.gguf --device cuda --prompt "hello world" --temp 0 \
        -n 128 --json 2>>$W/gen_err.log | tail -1 >$W/genk_${st}_$r.json
      note "8B Q4_K_M staged=$st run $r: $(python3 -c "import json, hashlib; j=json.load(open('$W/genk_${st}_$r.json')); print('decode_tps %.1f text md5 %s' % (j['decode_tps'], hashlib.md5(j['text'].encode()).hexdigest()[:10]))" 2>&1)"
    done
  done
fi
cat $W/kernels_test2.log >>$W/kernels_test.log 2>/dev/null
cp $W/kernels_test.log $W/models_test.log $OUT/ 2>/dev/null
cat $W/gen_*.json $W/genk_*.json >$OUT/gen_all.txt 2>/dev/null
note "all done at $(el) s"
echo "---- bench (us, GB/s, % of copy; graph columns last)"
grep -E "^copy|^gemv" $OUT/bench_staged.txt | sed -E 's/ +/ /g' | cut -c1-150
echo "---- summary"
cat "$S"
