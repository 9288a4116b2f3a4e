#!/bin/bash
# The closing device call for the int8 tensor-core products (after
# mmq_check.sh): the whole gpu-preset build and `ctest -L gpu`, then end to
# end on the synthetic 8B Q4_0 file with HEARTH_CUDA_MMQ=1 / 0 interleaved:
# 16 and 64 concurrent streams (hearth-bench concurrent), a cold 512-token
# prompt (hearth-cli generate) and a warm one (hearth-bench prefill, median
# of 3 after a warm-up) with mmq for every product or only up to 64 rows
# (HEARTH_CUDA_MMQ_MAX_TOKENS), batch-1 decode, per-op profiles at 16 and 64
# streams; last the mmq micro-benchmark at a few shapes.
# Run from the tree's root with .deps/pcre2 there: `bash bench/gpu/mmq_final.sh`.
cd "$(dirname "$0")/../.."
D=$PWD/.deps/pcre2
export PKG_CONFIG_SYSROOT_DIR=$D PKG_CONFIG_PATH=$D/usr/lib/x86_64-linux-gnu/pkgconfig
export LD_LIBRARY_PATH=$D/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/hearth-out}
LIMIT=${LIMIT:-470}  # seconds this script may run (ctest and the micro-benchmark get what is left)
B=build/gpu
S=$OUT/summary.txt
: >"$S"
note() { echo "$*" | tee -a "$S"; }
t0=$(date +%s)
el() { echo "$(($(date +%s) - t0))"; }
cmake --preset gpu >$OUT/cfg.log 2>&1 || { tail -30 $OUT/cfg.log; exit 1; }
cmake --build $B -j16 >$OUT/build.log 2>&1 || { grep -m5 -A12 -E "error|FAILED" $OUT/build.log; exit 1; }
note "built at $(el) s"
CLI=$B/cli/hearth-cli
HB=$B/bench/engine/hearth-bench
M=/tmp/synth
mkdir -p $M
($CLI synth --shape llama-8b --quant Q4_0 -o $M/8b.gguf >$OUT/synth.log 2>&1) &
SYN=$!
wait $SYN
head -c 512 tests/peer/data/public_domain.txt >/tmp/p512.txt
gen() { # LABEL ARGS... (env from the caller)
  local l=$1
  shift
  local j
  j=$($CLI generate $M/8b.gguf --device cuda --temp 0 --json "$@" 2>>$OUT/gen_err.log | tail -1)
  note "$l $(echo "$j" | python3 -c 'import json,sys; j=json.load(sys.stdin); print("decode %.1f prefill %.1f (prompt %d)" % (j["decode_tps"], j["prefill_tps"], j["prompt_tokens"]))' 2>&1)"
}
conc() { # STREAMS LABEL EXTRA (env from the caller)
  timeout 120 $HB concurrent $M/8b.gguf --streams $1 --tokens 64 --json $3 >$OUT/conc.json 2>"$OUT/conc_$2.err"
  note "$2 $1 streams rc=$? $(python3 -c "
import json; j=json.load(open('$OUT/conc.json'))
print('aggregate %.1f single %.1f' % (j['aggregate_decode_tps'], j['single_stream_decode_tps']))" 2>&1 | tail -1)"
}
pre() { # LABEL BATCH (env from the caller)
  timeout 120 $HB prefill $M/8b.gguf --tokens 512 --reps 3 --max-batch-tokens $2 --json >$OUT/pre.json 2>>$OUT/pre.err
  note "$1 warm prompt 512 (batch $2) rc=$? $(python3 -c "
import json; j=json.load(open('$OUT/pre.json'))
print('prefill %.1f tok/s ttft %.1f ms each %s' % (j['prefill_tps'], j['ttft_ms'], ['%.0f' % x for x in j['prefill_tps_each']]))" 2>&1 | tail -1)"
}
for q in 1 0; do
  HEARTH_CUDA_MMQ=$q conc 16 "mmq=$q"
  HEARTH_CUDA_MMQ=$q conc 64 "mmq=$q"
done
for cfg in "1 0" "1 64" "0 0"; do
  set -- $cfg
  HEARTH_CUDA_MMQ=$1 HEARTH_CUDA_MMQ_MAX_TOKENS=$2 gen "mmq=$1 max=$2 cold prompt 512" --prompt-file /tmp/p512.txt -n 1
  HEARTH_CUDA_MMQ=$1 HEARTH_CUDA_MMQ_MAX_TOKENS=$2 pre "mmq=$1 max=$2" 256
  [ $1 = 1 ] && HEARTH_CUDA_MMQ=$1 HEARTH_CUDA_MMQ_MAX_TOKENS=$2 pre "mmq=$1 max=$2" 512
done
HEARTH_CUDA_MMQ=1 gen "mmq=1 batch-1 decode" --prompt "hello world" -n 128
HEARTH_CUDA_MMQ=1 conc 16 mmq1prof16 --profile
head -16 $OUT/conc_mmq1prof16.err
HEARTH_CUDA_MMQ=1 conc 64 mmq1prof64 --profile
head -16 $OUT/conc_mmq1prof64.err
note "e2e done at $(el) s"
left=$((LIMIT - $(el) - 50))
timeout $left ctest --test-dir $B -L gpu -LE gpu-bench -j4 --output-on-failure --timeout 150 >$OUT/ctest.log 2>&1
note "ctest (limit $left s) at $(el) s: $(grep -E 'tests passed|tests failed' $OUT/ctest.log)"
grep -E "\*\*\*Failed|Failed  |Timeout|Not Run" $OUT/ctest.log | head -10 | tee -a "$S"
grep -E "16 concurrent vs solo: request" $OUT/ctest.log | head -8
left=$((LIMIT - $(el) - 5))
[ $left -gt 10 ] && timeout $left $B/tests/kernels/cuda/kernels_cuda_bench mmq >$OUT/mmq_bench.log 2>&1
note "mmq bench rc=$? at $(el) s"
grep -E "copy|Q4_0 .*(4096 x 4096|14336 x 4096|4096 x 14336)" $OUT/mmq_bench.log
note "all done at $(el) s"
