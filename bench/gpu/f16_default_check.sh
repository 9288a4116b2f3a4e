#!/bin/bash
# One device call for issue 20, v20: which mmq activations the batched decode
# steps should default to, now that the split-K choice counts its partial
# sums (v19: the f16 kernel 1.1-1.8x the int8 one at 64 tokens). hearth-bench
# concurrent at 16 and 64 streams, interleaved ROUNDS times (default 2): int8
# (the default until v20), int8 with the v18 split model, f16 from 2, 9 and
# 17 rows (HEARTH_CUDA_MMQ_F16=N); perplexity of a synthetic llama-1b Q4_0
# file through f16 mmq, int8 mmq and the f16 + cuBLAS path; the decode
# attention micro-benchmark with graph-replayed times. LLAMA=1 builds
# llama.cpp in the background and adds llama-batched-bench (16, 64).
# Needs PCRE2 in .deps/pcre2.
cd "$(dirname "$0")/../.."
source bench/gpu/device_env.sh
[ "${LLAMA:-0}" = 1 ] && note "$(start_llama_build llama-batched-bench)"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader | tee -a "$S"
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEARTH_ENGINE_ONLY=ON -DHEARTH_CUDA_ARCHITECTURES=90 \
  >$W/cfg.log 2>&1 || { tail -30 $W/cfg.log; exit 1; }
cmake --build $B -j16 --target kernels_cuda_bench hearth-cli hearth-bench >$W/build.log 2>&1 ||
  { grep -m5 -A12 -E "error|FAILED" $W/build.log; exit 1; }
note "built"
CLI=$B/cli/hearth-cli
HB=$B/bench/engine/hearth-bench
[ -f $M/8b.gguf ] || $CLI synth --shape llama-8b --quant Q4_0 -o $M/8b.gguf >$W/synth.log 2>&1 &
SYN=$!
timeout 120 $B/tests/kernels/cuda/kernels_cuda_bench attn >$OUT/attn_bench.txt 2>&1
note "attn sweep rc $?"
grep -E "copy d2d|ctx +(256|4096) " $OUT/attn_bench.txt | grep -vE "split +(32|96|128|256) " | tee -a "$S"
wait $SYN
[ -f $M/1b.gguf ] || $CLI synth --shape llama-1b --quant Q4_0 -o $M/1b.gguf >>$W/synth.log 2>&1
conc() { # STREAMS F16 [SPLIT_BYTES]
  local v
  v=$(HEARTH_CUDA_MMQ_SPLIT_BYTES=${3:-1} HEARTH_CUDA_MMQ_F16=$2 timeout 100 $HB concurrent $M/8b.gguf --device cuda \
    --streams $1 --tokens 128 --json 2>>$W/err.log |
    python3 -c "import json,sys; j=json.load(sys.stdin); print('%.1f' % j['aggregate_decode_tps'])" 2>&1)
  note "$1 streams, f16 from '$2', split bytes '${3:-1}': aggregate decode $v tok/s"
}
for r in $(seq ${ROUNDS:-2}); do
  for n in 16 64; do
    conc $n 0
    conc $n 0 0
    conc $n 2
    conc $n 9
    conc $n 17
  done
done
head -c 8000 tests/peer/data/public_domain.txt >$W/ppl.txt
for run in "1 2" "1 0" "0 0"; do
  set -- $run
  r=$(HEARTH_CUDA_MMQ=$1 HEARTH_CUDA_MMQ_MAX_TOKENS=512 HEARTH_CUDA_MMQ_F16=$2 timeout 60 \
    $CLI perplexity $M/1b.gguf --file $W/ppl.txt --ctx 512 --device cuda --json 2>>$W/err.log | tail -1)
  note "ppl llama-1b Q4_0 ctx 512 mmq=$1 f16 from '$2': $(echo "$r" | python3 -c 'import json,sys; print(json.load(sys.stdin)["perplexity"])' 2>&1)"
done
r=$(timeout 60 $CLI perplexity $M/1b.gguf --file $W/ppl.txt --ctx 512 --json 2>>$W/err.log | tail -1)
note "ppl llama-1b Q4_0 ctx 512 CPU: $(echo "$r" | python3 -c 'import json,sys; print(json.load(sys.stdin)["perplexity"])' 2>&1)"
if [ "${LLAMA:-0}" = 1 ] && llama_batched $M/8b.gguf; then
  conc 16 0
  conc 64 0
  conc 16 2
  conc 64 17
fi
cp $W/err.log $OUT/ 2>/dev/null
note "done"
