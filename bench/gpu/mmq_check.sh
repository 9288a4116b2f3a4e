#!/bin/bash
# One device call for the int8 tensor-core products (kernels/cuda/mmq.cu):
# build (gpu preset, the targets used here), the mmq and q8 GEMV kernel tests,
# the 16-stream batch-vs-solo tests, the mmq micro-benchmark against the f16
# path, then end to end with HEARTH_CUDA_MMQ=1 / 0 interleaved: 16 and 64
# concurrent streams (hearth-bench concurrent), a 512-token prompt and batch-1
# decode (hearth-cli generate) on the synthetic 8B Q4_0 file, and perplexity
# of a synthetic llama-1b Q4_0 file on the CPU and on CUDA both ways.
# Run from the tree's root with .deps/pcre2 there: `bash bench/gpu/mmq_check.sh [quick]`
# (quick: no micro-benchmark, no perplexity). Logs under $OUT; summary on stdout.
cd "$(dirname "$0")/../.."
D=$PWD/.deps/pcre2
export PKG_CONFIG_SYSROOT_DIR=$D PKG_CONFIG_PATH=$D/usr/lib/x86_64-linux-gnu/pkgconfig
export LD_LIBRARY_PATH=$D/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/hearth-out}
MODE=${1:-full}
B=build/gpu
S=$OUT/summary.txt
: >"$S"
note() { echo "$*" | tee -a "$S"; }
t0=$(date +%s)
el() { echo "$(($(date +%s) - t0))"; }
cmake --preset gpu >$OUT/cfg.log 2>&1 || { tail -30 $OUT/cfg.log; exit 1; }
cmake --build $B -j16 --target kernels_cuda_test kernels_cuda_bench hearth-cli hearth-bench engine_runtime_cuda_test \
  >$OUT/build.log 2>&1 || { grep -m5 -A12 -E "error|FAILED" $OUT/build.log; exit 1; }
note "built at $(el) s"
CLI=$B/cli/hearth-cli
M=/tmp/synth
mkdir -p $M
(
  [ -f $M/8b.gguf ] || $CLI synth --shape llama-8b --quant Q4_0 -o $M/8b.gguf
  [ -f $M/1b.gguf ] || $CLI synth --shape llama-1b --quant Q4_0 -o $M/1b.gguf
) >$OUT/synth.log 2>&1 &
SYN=$!
$B/tests/kernels/cuda/kernels_cuda_test --gtest_filter='CudaMmq*:CudaGemvQ8*' >$OUT/kt.log 2>&1
note "kernel tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $OUT/kt.log | tr '\n' ' ')"
grep -E "^\[  FAILED|Failure|error" $OUT/kt.log | head -8
$B/tests/engine/runtime/engine_runtime_cuda_test --gtest_filter='*Sixteen*' >$OUT/sixteen.log 2>&1
note "sixteen rc=$? $(grep -E '^\[  (PASSED|FAILED)|differs' $OUT/sixteen.log | tr '\n' ' ' | cut -c1-900)"
wait $SYN
note "synth done at $(el) s"
head -c 512 tests/peer/data/public_domain.txt >/tmp/p512.txt
head -c 8000 tests/peer/data/public_domain.txt >/tmp/ppl.txt
gen() { # LABEL ARGS... (env from the caller)
  local l=$1
  shift
  local j
  j=$($CLI generate $M/8b.gguf --device cuda --temp 0 --json "$@" 2>>$OUT/gen_err.log | tail -1)
  note "$l $(echo "$j" | python3 -c 'import json,sys; j=json.load(sys.stdin); print("decode %.1f prefill %.1f (prompt %d)" % (j["decode_tps"], j["prefill_tps"], j["prompt_tokens"]))' 2>&1)"
}
conc() { # STREAMS LABEL EXTRA (env from the caller)
  timeout 120 $B/bench/engine/hearth-bench concurrent $M/8b.gguf --streams $1 --tokens 64 --json $3 \
    >$OUT/conc.json 2>"$OUT/conc_$2.err"
  note "$2 $1 streams rc=$? $(python3 -c "
import json; j=json.load(open('$OUT/conc.json'))
print('aggregate %.1f single %.1f' % (j['aggregate_decode_tps'], j['single_stream_decode_tps']))" 2>&1 | tail -1)"
}
for rep in 1 2; do
  for q in 1 0; do
    HEARTH_CUDA_MMQ=$q gen "mmq=$q prompt 512" --prompt-file /tmp/p512.txt -n 1
    HEARTH_CUDA_MMQ=$q conc 16 "mmq=$q"
    HEARTH_CUDA_MMQ=$q conc 64 "mmq=$q"
  done
done
HEARTH_CUDA_MMQ=1 gen "mmq=1 batch-1 decode" --prompt "hello world" -n 128
HEARTH_CUDA_MMQ=1 conc 16 mmq1prof --profile
head -40 $OUT/conc_mmq1prof.err
HEARTH_CUDA_MMQ=0 conc 16 mmq0prof --profile
head -25 $OUT/conc_mmq0prof.err
note "e2e done at $(el) s"
if [ "$MODE" = full ]; then
  $B/tests/kernels/cuda/kernels_cuda_bench mmq >$OUT/mmq_bench.log 2>&1
  note "mmq bench rc=$? at $(el) s"
  cat $OUT/mmq_bench.log
fi
if [ "$MODE" = full ]; then
  for run in "cpu 1" "cuda 1" "cuda 0"; do
    set -- $run
    r=$(HEARTH_CUDA_MMQ=$2 timeout 100 $CLI perplexity $M/1b.gguf --file /tmp/ppl.txt --ctx 512 \
      --device $1 --threads 16 --json 2>>$OUT/ppl_err.log | tail -1)
    note "ppl llama-1b Q4_0 $1 mmq=$2: $(echo "$r" | cut -c1-200)"
  done
fi
note "all done at $(el) s"
