#!/bin/bash
# One device call for issue 20, v13 (long-context decode attention): build,
# the attention tests and the rest of the kernel tests, the attention
# micro-benchmark (kernels_cuda_bench attn: v12 vs wide kernels, chunk
# lengths), and decode of the 8B Q4_0 file at ~4,096 tokens of context and
# at short context over the configurations CFGS (name:VAR=V,VAR2=V ...),
# interleaved twice. Needs PCRE2 in .deps/pcre2 (or ../.deps/pcre2 from a
# copy of the tree inside the checkout). Logs under $OUT.
cd "$(dirname "$0")/../.."
D=$PWD/.deps/pcre2
[ -d $D ] || D=$PWD/../.deps/pcre2
export PKG_CONFIG_SYSROOT_DIR=$D PKG_CONFIG_PATH=$D/usr/lib/x86_64-linux-gnu/pkgconfig
export LD_LIBRARY_PATH=$D/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/hearth-out}
W=/tmp/hw
mkdir -p $W $OUT
CFGS=${CFGS:-wide:HEARTH_CUDA_NONE=1 v12:HEARTH_CUDA_ATTN_WIDE=0}
B=/tmp/bgpu
S=$OUT/summary.txt
: >"$S"
t0=$(date +%s)
el() { echo $(($(date +%s) - t0)); }
note() { echo "$*" | tee -a "$S"; }
CLI=$B/cli/hearth-cli
M=/tmp/synth
mkdir -p $M
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEARTH_ENGINE_ONLY=ON -DHEARTH_CUDA_ARCHITECTURES=90 \
  >$W/cfg.log 2>&1 || { tail -30 $W/cfg.log; exit 1; }
cmake --build $B -j16 --target hearth-cli kernels_cuda_test kernels_cuda_bench >$W/build.log 2>&1 ||
  { grep -m5 -A12 -E "error|FAILED" $W/build.log; exit 1; }
note "built at $(el) s"
(
  $CLI synth --shape llama-8b --quant Q4_0 -o $M/8b.gguf
  $CLI synth --shape smollm2-135m --quant Q4_1 -o $M/smol.gguf
) >$W/synth.log 2>&1 &
SYN=$!
timeout 120 $B/tests/kernels/cuda/kernels_cuda_test --gtest_brief=1 >$W/kernels_test.log 2>&1
note "kernels_cuda_test rc $? at $(el) s: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED TEST' $W/kernels_test.log | tr '\n' ' ')"
grep -E "Failure|Expected|Which is|trace|error" $W/kernels_test.log | head -20 | tee -a $S
cp $W/kernels_test.log $OUT/
timeout 90 $B/tests/kernels/cuda/kernels_cuda_bench attn >$OUT/attn_bench.txt 2>&1
note "kernels_cuda_bench attn rc $? at $(el) s"
cat $OUT/attn_bench.txt | tee -a $S
wait $SYN
gen() { # FILE LABEL ARGS... ; env from the caller
  local f=$1 l=$2
  shift 2
  timeout 90 $CLI generate $f --device cuda --temp 0 --json "$@" 2>>$W/gen_err.log | tail -1 >$W/g.json
  note "$l: $(python3 -c "import json, hashlib; j=json.load(open('$W/g.json')); print('decode_tps %.1f prefill_tps %.1f prompt %d md5 %s' % (j['decode_tps'], j['prefill_tps'], j['prompt_tokens'], hashlib.md5(j['text'].encode()).hexdigest()[:10]))" 2>&1)"
}
python3 -c "print('hello world ' * 334)" >$W/long.txt # 4,009 tokens
for r in 1 2; do
  for c in $CFGS; do
    n=${c%%:*}
    env $(echo ${c#*:} | tr , " ") bash -c "$(declare -f gen note); W=$W; S=$S; CLI=$CLI;
      gen $M/8b.gguf '8B Q4_0 ctx4096 $n run $r' --prompt-file $W/long.txt -n 64 --ctx 4352"
  done
done
note "ctx4096 done at $(el) s"
SHORT_CFGS=${SHORT_CFGS:-wide:HEARTH_CUDA_NONE=1 v12:HEARTH_CUDA_ATTN_WIDE=0}
for r in 1 2; do
  for c in $SHORT_CFGS; do
    n=${c%%:*}
    env $(echo ${c#*:} | tr , " ") bash -c "$(declare -f gen note); W=$W; S=$S; CLI=$CLI;
      gen $M/8b.gguf '8B Q4_0 short $n run $r' --prompt 'hello world' -n 128;
      gen $M/smol.gguf 'smol Q4_1 short $n run $r' --prompt 'hello world' -n 128"
  done
done
note "short done at $(el) s"
if [ "$(el)" -lt "${SANIT_BEFORE:-200}" ]; then
  timeout 60 compute-sanitizer --tool memcheck $B/tests/kernels/cuda/kernels_cuda_test --gtest_brief=1 \
    --gtest_filter='CudaPagedAttention.BatchedDecodeSplitKv:CudaPagedAttention.MixedSequencesAndPositions' \
    >$W/sanit.log 2>&1
  note "memcheck rc $? at $(el) s: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $W/sanit.log | tr '\n' ' ')"
  cp $W/sanit.log $OUT/
fi
cp $W/gen_err.log $OUT/ 2>/dev/null
note "all done at $(el) s"
