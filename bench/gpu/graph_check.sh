#!/bin/bash
# One device call for the CUDA-graph / 8-bit-activation work (docs/perf-notes.md
# v6-v8): gpu-preset build in /tmp/bgpu (outside the carried tree, so a
# follow-up call on the still-warm machine can reuse it), the gpu label with
# the default activations and again with HEARTH_CUDA_GEMV=f32 for the engine
# and graph tests, decode tok/s of 8B Q4_0 and SmolLM2-135M-shape Q4_1
# synthetic files with graphs on/off x q8/f32 (interleaved), 16 streams, and
# perplexity of a synthetic file on the CPU and CUDA (q8, f32).
# Needs PCRE2 in .deps/pcre2 (see merged_check.sh). Run from the tree's root:
# `bash bench/gpu/graph_check.sh`; logs under $OUT, a summary last.
cd "$(dirname "$0")/../.."
ROOT=$PWD
D=$ROOT/.deps/pcre2
export PKG_CONFIG_SYSROOT_DIR=$D PKG_CONFIG_PATH=$D/usr/lib/x86_64-linux-gnu/pkgconfig
export LD_LIBRARY_PATH=$D/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/hearth-out}
B=/tmp/bgpu
S=$OUT/summary.txt
: >"$S"
note() { echo "$*" | tee -a "$S"; }
t0=$(date +%s)
el() { echo "$(($(date +%s) - t0)) s"; }
[ -f .m/p1 ] && cp .m/p1 /tmp/p1
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEARTH_ENGINE_ONLY=ON -DHEARTH_CUDA_ARCHITECTURES=90 \
  >$OUT/cfg.log 2>&1 || { tail -30 $OUT/cfg.log; exit 1; }
cmake --build $B -j16 >$OUT/build.log 2>&1 || { grep -m5 -A12 -E "error|FAILED" $OUT/build.log; exit 1; }
note "built at $(el)"
CLI=$B/cli/hearth-cli
M=/tmp/synth
mkdir -p $M
(
  $CLI synth --shape llama-8b --quant Q4_0 -o $M/8b.gguf
  $CLI synth --shape smollm2-135m --quant Q4_1 -o $M/smol.gguf
) >$OUT/synth.log 2>&1 &
SYN=$!
ctest --test-dir $B -L gpu -LE gpu-bench -j3 --output-on-failure --timeout 240 >$OUT/ctest.log 2>&1
note "ctest (default activations) at $(el): $(grep -E 'tests passed|tests failed' $OUT/ctest.log)"
grep -E "\*\*\*Failed|Failed  |Timeout" $OUT/ctest.log | head -10 | tee -a "$S"
HEARTH_CUDA_GEMV=f32 ctest --test-dir $B -R "EngineCuda|CudaGraphs|CudaModel|CudaGreedy" -j3 --output-on-failure \
  --timeout 240 >$OUT/ctest_f32.log 2>&1
note "ctest f32 (engine, graphs, model) at $(el): $(grep -E 'tests passed|tests failed' $OUT/ctest_f32.log)"
grep -E "\*\*\*Failed|Failed  " $OUT/ctest_f32.log | head -10 | tee -a "$S"
# The batch-vs-solo agreement, 4 random seeds per activation path.
for a in q8 f32; do
  HEARTH_CUDA_GEMV=$a $B/tests/engine/runtime/engine_runtime_cuda_test --gtest_filter='*Sixteen*' --gtest_repeat=4 \
    >$OUT/sixteen_$a.log 2>&1
  note "sixteen $a: $(grep -E '^16 concurrent vs solo:' $OUT/sixteen_$a.log | sed 's/16 concurrent vs solo: //' | tr '\n' ';') \
fails $(grep -c '^\[  FAILED  \] EngineCuda' $OUT/sixteen_$a.log)"
done
wait $SYN
decode() { # FILE LABEL ENV...
  local f=$1 l=$2
  shift 2
  local j
  j=$(env "$@" $CLI generate $f --device cuda --prompt "hello world" --temp 0 -n 128 --json 2>>$OUT/gen_err.log | tail -1)
  note "$l $(echo "$j" | python3 -c 'import json,sys; j=json.load(sys.stdin); print("decode_tps %.1f" % j["decode_tps"])' 2>&1)"
}
for rep in 1 2; do
  for g in 1 0; do
    for a in q8 f32; do decode $M/8b.gguf "8B Q4_0   graph=$g $a" HEARTH_CUDA_GRAPH=$g HEARTH_CUDA_GEMV=$a; done
  done
done
for rep in 1 2; do
  for g in 1 0; do
    for a in q8 f32; do decode $M/smol.gguf "135M Q4_1 graph=$g $a" HEARTH_CUDA_GRAPH=$g HEARTH_CUDA_GEMV=$a; done
  done
done
note "decode done at $(el)"
for a in q8 f32; do
  HEARTH_CUDA_GEMV=$a timeout 150 $B/bench/engine/hearth-bench concurrent $M/8b.gguf --streams 16 \
    --tokens 64 --json >$OUT/conc_$a.json 2>$OUT/conc_$a.err
  note "16 streams $a rc=$? $(python3 -c "
import json; j=json.load(open('$OUT/conc_$a.json'))
print('aggregate %.1f single %.1f' % (j['aggregate_decode_tps'], j['single_stream_decode_tps']))" 2>&1 | tail -1)"
done
head -c 6000 tests/peer/data/public_domain.txt >/tmp/ppl.txt
for dev in cpu cuda; do
  for a in q8 f32; do
    [ $dev = cpu ] && [ $a = f32 ] && continue
    r=$(HEARTH_CUDA_GEMV=$a timeout 120 $CLI perplexity $M/smol.gguf --file /tmp/ppl.txt --ctx 512 --device $dev \
      --threads 16 --json 2>>$OUT/ppl_err.log | tail -1)
    note "ppl synthetic 135M $dev $a: $r"
  done
done
note "all done at $(el)"
