#!/bin/bash
# One device call for issue 20 (the non-GEMV half of a decode step): build, optional kernel tests,
# the 8B Q4_0 decode A/B over the fusion switches, and an ncu per-kernel profile of decode steps.
# PHASES (env, space separated; default "build e2e prof"):
#   build  cmake gpu build of hearth-cli (+ kernels_cuda_test kernels_cuda_bench models_llama_cuda_test with tests)
#   tests  kernels_cuda_test and models_llama_cuda_test
#   e2e    8B Q4_0 decode, configurations CFGS (name:ENV=V,ENV2=V) interleaved twice
#   prof   ncu --metrics gpu__time_duration.sum over ~2 decode steps (bench/gpu/kernel_profile.py)
#   extra  Q4_K_M decode, decode at 4,096 tokens of context, SmolLM2-135M shape decode
# Needs PCRE2 in .deps/pcre2 (see merged_check.sh). Run from the tree's root (or a copy of it).
cd "$(dirname "$0")/../.."
D=$PWD/.deps/pcre2
[ -d $D ] || D=$PWD/../.deps/pcre2  # run from a copy of the tree inside the checkout
export PKG_CONFIG_SYSROOT_DIR=$D PKG_CONFIG_PATH=$D/usr/lib/x86_64-linux-gnu/pkgconfig
export LD_LIBRARY_PATH=$D/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/hearth-out}
W=/tmp/hw
mkdir -p $W $OUT
PHASES=${PHASES:-build e2e prof}
CFGS=${CFGS:-base:HEARTH_CUDA_NONE=1}  # name:VAR=V,VAR2=V ...
B=/tmp/bgpu
S=$OUT/summary.txt
: >"$S"
t0=$(date +%s)
el() { echo $(($(date +%s) - t0)); }
note() { echo "$*" | tee -a "$S"; }
has() { [[ " $PHASES " == *" $1 "* ]]; }
CLI=$B/cli/hearth-cli
M=/tmp/synth
mkdir -p $M
if has build; then
  cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEARTH_ENGINE_ONLY=ON -DHEARTH_CUDA_ARCHITECTURES=90 \
    >$W/cfg.log 2>&1 || { tail -30 $W/cfg.log; exit 1; }
  T="hearth-cli"
  has tests && T="$T kernels_cuda_test models_llama_cuda_test"
  cmake --build $B -j16 --target $T >$W/build.log 2>&1 || { grep -m5 -A12 -E "error|FAILED" $W/build.log; exit 1; }
  note "built ($T) at $(el) s"
fi
[ -f $M/8b.gguf ] || $CLI synth --shape llama-8b --quant Q4_0 -o $M/8b.gguf >$W/synth.log 2>&1
if has tests; then
  timeout 120 $B/tests/kernels/cuda/kernels_cuda_test --gtest_brief=1 >$W/kernels_test.log 2>&1
  note "kernels_cuda_test rc $? at $(el) s: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED TEST' $W/kernels_test.log | tr '\n' ' ')"
  timeout 90 $B/tests/models/cuda/models_llama_cuda_test --gtest_brief=1 >$W/models_test.log 2>&1
  note "models_llama_cuda_test rc $? at $(el) s: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED TEST' $W/models_test.log | tr '\n' ' ')"
  cat $W/models_test.log >>$W/kernels_test.log
  cp $W/kernels_test.log $OUT/
fi
gen() { # FILE LABEL ARGS... ; env from the caller
  local f=$1 l=$2
  shift 2
  timeout 90 $CLI generate $f --device cuda --temp 0 --json "$@" 2>>$W/gen_err.log | tail -1 >$W/g.json
  note "$l: $(python3 -c "import json, hashlib; j=json.load(open('$W/g.json')); print('decode_tps %.1f prefill_tps %.1f prompt %d md5 %s' % (j['decode_tps'], j['prefill_tps'], j['prompt_tokens'], hashlib.md5(j['text'].encode()).hexdigest()[:10]))" 2>&1)"
}
if has e2e; then
  for r in 1 2; do
    for c in $CFGS; do
      n=${c%%:*}
      env $(echo ${c#*:} | tr , " ") bash -c "$(declare -f gen note); W=$W; S=$S; CLI=$CLI; gen $M/8b.gguf '8B Q4_0 $n run $r' --prompt 'hello world' -n 128"
    done
  done
fi
if has prof; then
  for c in ${PCFGS:-${CFGS%% *}}; do
    n=${c%%:*}
    env $(echo ${c#*:} | tr , " ") timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum --launch-skip 4000 --launch-count 1200 \
      --csv --log-file $W/ncu_$n.csv $CLI generate $M/8b.gguf --device cuda --prompt "hello world" --temp 0 -n 24 \
      >/dev/null 2>>$W/ncu_err.log
    python3 bench/gpu/kernel_profile.py $W/ncu_$n.csv embedding_kernel >$OUT/prof_$n.txt 2>&1
    note "---- ncu $n"
    head -24 $OUT/prof_$n.txt | tee -a $S
  done
fi
if has extra; then
  [ -f $M/8bk.gguf ] || $CLI synth --shape llama-8b --quant Q4_K_M -o $M/8bk.gguf >>$W/synth.log 2>&1
  [ -f $M/smol.gguf ] || $CLI synth --shape smollm2-135m --quant Q4_1 -o $M/smol.gguf >>$W/synth.log 2>&1
  python3 -c "print('hello world ' * 334)" >$W/long.txt  # ~4,010 tokens (the synthetic tokenizer: ~1 a byte)
  for c in $CFGS; do
    n=${c%%:*}
    env $(echo ${c#*:} | tr , " ") bash -c "$(declare -f gen note); W=$W; S=$S; CLI=$CLI;
      gen $M/8bk.gguf '8B Q4_K_M $n' --prompt 'hello world' -n 128;
      gen $M/smol.gguf 'smol Q4_1 $n' --prompt 'hello world' -n 128;
      gen $M/8b.gguf '8B Q4_0 ctx4096 $n' --prompt-file $W/long.txt -n 64 --ctx 4352"
  done
fi
cp $W/gen_err.log $W/ncu_err.log $OUT/ 2>/dev/null
note "all done at $(el) s"
