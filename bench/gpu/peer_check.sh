#!/bin/bash
# One device call: Hearth (gpu build in /tmp/bgpu) and llama.cpp (built here
# from the source vendored in the llama-cpp-python sdist, carried as
# .llama/llama.tgz: git-ignored, nothing of it committed) on the very same
# synthetic files. llama.cpp builds in the background at nice 19 while
# Hearth's tests and A/B runs go (PDL on/off, layer timing on/off, GEMV
# passes for 16-token steps); once it is built, both engines run again back
# to back on an idle CPU: the same-run table of docs/benchmarks.md.
# Run from the tree's root: `bash bench/gpu/peer_check.sh`; logs under $OUT.
cd "$(dirname "$0")/../.."
ROOT=$PWD
D=$ROOT/.deps/pcre2
export PKG_CONFIG_SYSROOT_DIR=$D PKG_CONFIG_PATH=$D/usr/lib/x86_64-linux-gnu/pkgconfig
export LD_LIBRARY_PATH=$D/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/hearth-out}
B=/tmp/bgpu
L=/tmp/llama
S=$OUT/summary.txt
: >"$S"
note() { echo "$*" | tee -a "$S"; }
t0=$(date +%s)
el() { echo "$(($(date +%s) - t0))"; }
rm -f /tmp/llama.done
if [ -f .llama/llama.tgz ]; then
  mkdir -p $L && tar xzf .llama/llama.tgz -C $L
  (
    cmake -S $L/llama.cpp -B $L/b -G Ninja -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAMA_BUILD_TESTS=OFF \
      -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_APP=OFF \
      -DCMAKE_BUILD_TYPE=Release && nice -n 19 cmake --build $L/b --target llama-bench llama-batched-bench -j16
    echo "rc=$?" >/tmp/llama.done
  ) >$OUT/llama_build.log 2>&1 &
fi
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEARTH_ENGINE_ONLY=ON -DHEARTH_CUDA_ARCHITECTURES=90 \
  >$OUT/cfg.log 2>&1 || { tail -30 $OUT/cfg.log; exit 1; }
cmake --build $B -j16 >$OUT/build.log 2>&1 || { grep -m5 -A12 -E "error|FAILED" $OUT/build.log; exit 1; }
note "hearth built at $(el) s"
CLI=$B/cli/hearth-cli
M=/tmp/synth
mkdir -p $M
(
  $CLI synth --shape llama-8b --quant Q4_0 -o $M/8b.gguf
  $CLI synth --shape smollm2-135m --quant Q4_1 -o $M/smol.gguf
  $CLI synth --shape llama-8b --quant Q4_K_M -o $M/8bk.gguf
) >$OUT/synth.log 2>&1 &
SYN=$!
ctest --test-dir $B -L gpu -LE gpu-bench -j3 --output-on-failure --timeout 240 >$OUT/ctest.log 2>&1
note "ctest at $(el) s: $(grep -E 'tests passed|tests failed' $OUT/ctest.log)"
grep -E "\*\*\*Failed|Failed  |Timeout" $OUT/ctest.log | head -10 | tee -a "$S"
wait $SYN
head -c 512 tests/peer/data/public_domain.txt >/tmp/p512.txt
gen() { # FILE LABEL EXTRA-ARGS... (env via the caller)
  local f=$1 l=$2
  shift 2
  local j
  j=$($CLI generate $f --device cuda --temp 0 --json "$@" 2>>$OUT/gen_err.log | tail -1)
  note "$l $(echo "$j" | python3 -c 'import json,sys; j=json.load(sys.stdin); print("decode %.1f prefill %.1f (prompt %d)" % (j["decode_tps"], j["prefill_tps"], j["prompt_tokens"]))' 2>&1)"
}
for rep in 1 2; do
  for p in 1 0; do
    for t in 1 0; do
      HEARTH_CUDA_PDL=$p HEARTH_CUDA_LAYER_TIMING=$t gen $M/8b.gguf "8B Q4_0 pdl=$p timing=$t" --prompt "hello world" -n 128
      HEARTH_CUDA_PDL=$p HEARTH_CUDA_LAYER_TIMING=$t gen $M/smol.gguf "135M Q4_1 pdl=$p timing=$t" --prompt "hello world" -n 128
    done
  done
done
for n in 8 16; do
  HEARTH_CUDA_GEMV_TOKENS=$n timeout 150 $B/bench/engine/hearth-bench concurrent $M/8b.gguf --streams 16 --tokens 64 \
    --json >$OUT/conc_$n.json 2>$OUT/conc_$n.err
  note "16 streams gemv_tokens=$n rc=$? $(python3 -c "
import json; j=json.load(open('$OUT/conc_$n.json'))
print('aggregate %.1f single %.1f' % (j['aggregate_decode_tps'], j['single_stream_decode_tps']))" 2>&1 | tail -1)"
done
note "A/B done at $(el) s"
# llama.cpp: wait for its build (at most until 400 s into the call).
while [ ! -f /tmp/llama.done ] && [ "$(el)" -lt 400 ]; do sleep 5; done
note "llama.cpp build: $(cat /tmp/llama.done 2>/dev/null || echo 'not finished') at $(el) s"
LB=$L/b/bin
if [ -x $LB/llama-bench ]; then
  for f in 8b 8bk smol; do
    timeout 60 $LB/llama-bench -m $M/$f.gguf -ngl 99 -fa 1 -p 512 -n 128 -r 3 >$OUT/llama_$f.txt 2>&1
    note "llama.cpp $f: $(grep -E '^\|' $OUT/llama_$f.txt | tail -2 | tr -s ' ' | tr '\n' ' ')"
    gen $M/$f.gguf "hearth $f (same run)" --prompt "hello world" -n 128
    gen $M/$f.gguf "hearth $f prompt 512" --prompt-file /tmp/p512.txt -n 1
  done
  timeout 90 $LB/llama-batched-bench -m $M/8b.gguf -ngl 99 -fa 1 -c 20480 -npp 128 -ntg 128 -npl 16,64 \
    >$OUT/llama_batched.txt 2>&1
  note "llama.cpp batched: $(grep -E '^\|' $OUT/llama_batched.txt | tail -2 | tr -s ' ' | tr '\n' ' ')"
fi
for n in 16 64; do
  timeout 100 $B/bench/engine/hearth-bench concurrent $M/8b.gguf --streams $n --tokens 64 --json >$OUT/hconc_$n.json \
    2>>$OUT/conc.err
  note "hearth $n streams rc=$? $(python3 -c "
import json; j=json.load(open('$OUT/hconc_$n.json'))
print('aggregate %.1f single %.1f' % (j['aggregate_decode_tps'], j['single_stream_decode_tps']))" 2>&1 | tail -1)"
done
note "all done at $(el) s"
