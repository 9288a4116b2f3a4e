#!/bin/bash
# One device call for issue 20, v19: the wgmma form of the f16 mmq kernel
# (kernels/cuda/mmq_wg.cu, kF16Wg, HEARTH_CUDA_MMQ_WGMMA=1) against the
# mma.sync one and the int8 one. Builds the engine-only targets, runs the mmq
# kernel tests (every kind the device runs), the mmq micro-benchmark on the
# four 8B shapes at 16/32/64 tokens (f16, wgmma, q8, f16 path), hearth-bench
# concurrent at 16 and 64 streams (int8 default; f16 from 17 rows through
# wgmma; through mma.sync), a 64-stream profile with wgmma, and perplexity
# of a synthetic llama-1b Q4_0 file with every product through mmq (wgmma,
# int8). v20: the attention tests; the decode attention's stream kernel and
# its combine over head_dim pieces against the v13 ones (micro-benchmark,
# 8B decode at 4,096).
# Needs PCRE2 in .deps/pcre2. LLAMA=1 adds llama-batched-bench; LEAN=1
# keeps 64 tokens / 64 streams only and stops before the profile; LEAN=2
# stops after the kernel tests and the micro-benchmark.
cd "$(dirname "$0")/../.."
source bench/gpu/device_env.sh
[ "${LLAMA:-0}" = 1 ] && note "$(start_llama_build llama-batched-bench)"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader | tee -a "$S"
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEARTH_ENGINE_ONLY=ON -DHEARTH_CUDA_ARCHITECTURES=90 \
  >$W/cfg.log 2>&1 || { tail -30 $W/cfg.log; exit 1; }
cmake --build $B -j16 --target kernels_cuda_test kernels_cuda_bench >$W/build.log 2>&1 ||
  { grep -m5 -A12 -E "error|FAILED" $W/build.log; exit 1; }
note "built the kernel targets"
if [ "${LEAN:-0}" != 2 ]; then
  cmake --build $B -j16 --target hearth-cli hearth-bench >$W/build2.log 2>&1 &
  BLD=$!
fi
timeout 150 $B/tests/kernels/cuda/kernels_cuda_test --gtest_brief=1 --gtest_filter='CudaMmq*:CudaPagedAttention*' >$W/t.log 2>&1
note "CudaMmq*, CudaPagedAttention* rc $?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED TEST' $W/t.log | tr '\n' ' ')"
grep -E "Failure|Which is|Expected|actual|wgmma" $W/t.log | head -16 | tee -a "$S"
cp $W/t.log $OUT/tests.log
# v20: decode attention: the stream kernel (K/V tiles staged by cp.async) against the wide one, and the
# combine over head_dim pieces (auto: 4 for one sequence) against the v13 one (1 piece).
timeout 120 $B/tests/kernels/cuda/kernels_cuda_bench attn >$OUT/attn_bench.txt 2>&1
note "attn sweep rc $?"
grep -E "copy d2d|ctx +(4096|16384)" $OUT/attn_bench.txt | tee -a "$S"
for ctx in 4096 16384; do
  for st in 0 1; do
    for cp in 1 0; do
      v=$(HEARTH_CUDA_ATTN_STREAM=$st HEARTH_CUDA_ATTN_COMBINE_PARTS=$cp timeout 30 \
        $B/tests/kernels/cuda/kernels_cuda_bench attn $ctx 1 2>&1 | grep "^attn decode")
      note "stream '$st' combine parts '$cp': $v"
    done
  done
done
for shape in "4096 4096" "14336 4096" "4096 14336" "28672 4096"; do
  for n in $([ "${LEAN:-0}" = 1 ] && echo 64 || echo 16 32 64); do
    timeout 30 $B/tests/kernels/cuda/kernels_cuda_bench mmq $shape $n 2>&1 | tee -a "$S"
  done
done
note "split-K without the partial sums' bytes (the v18 model):"
for shape in "14336 4096" "28672 4096"; do
  HEARTH_CUDA_MMQ_SPLIT_BYTES=0 timeout 30 $B/tests/kernels/cuda/kernels_cuda_bench mmq $shape 64 2>&1 | tee -a "$S"
done
[ "${LEAN:-0}" = 2 ] && { note "done (kernels only)"; exit 0; }
wait $BLD || { grep -m5 -A12 -E "error|FAILED" $W/build2.log; exit 1; }
CLI=$B/cli/hearth-cli
HB=$B/bench/engine/hearth-bench
[ -f $M/8b.gguf ] || $CLI synth --shape llama-8b --quant Q4_0 -o $M/8b.gguf >$W/synth.log 2>&1
[ -f $M/1b.gguf ] || $CLI synth --shape llama-1b --quant Q4_0 -o $M/1b.gguf >>$W/synth.log 2>&1
note "synth done"
conc() { # N F16 WGMMA [SPLIT_BYTES]
  local v
  v=$(HEARTH_CUDA_MMQ_SPLIT_BYTES=${4:-1} HEARTH_CUDA_MMQ_F16=$2 HEARTH_CUDA_MMQ_WGMMA=$3 timeout 100 $HB concurrent $M/8b.gguf --device cuda --streams $1 \
    --tokens 128 --json 2>>$W/err.log | python3 -c "import json,sys; j=json.load(sys.stdin); print('%.1f' % j['aggregate_decode_tps'])" 2>&1)
  note "$1 streams, f16 from '$2', wgmma '$3', split bytes '${4:-1}': aggregate decode $v tok/s"
}
for r in $(seq ${ROUNDS:-1}); do
  for n in $([ "${LEAN:-0}" = 1 ] && echo 64 || echo 16 64); do
    conc $n 0 0
    conc $n 0 0 0
    conc $n 17 1
    conc $n 17 0
  done
done
python3 -c "print('hello world ' * 341 + 'hel')" >$W/long.txt # 4,096 tokens (the synthetic tokenizer)
for r in 1 2; do
  for ab in "0 1" "0 0" "1 0"; do
    set -- $ab
    v=$(HEARTH_CUDA_ATTN_STREAM=$1 HEARTH_CUDA_ATTN_COMBINE_PARTS=$2 timeout 90 $CLI generate $M/8b.gguf --device cuda \
      --temp 0 --json --prompt-file $W/long.txt -n 64 --ctx 4352 2>>$W/err.log | tail -1 | python3 -c \
      "import json,sys,hashlib; j=json.load(sys.stdin); print('%.1f %s' % (j['decode_tps'], hashlib.md5(j['text'].encode()).hexdigest()[:10]))" 2>&1)
    note "8B decode at 4,096 context, stream '$1' combine parts '$2': $v"
  done
done
[ "${LEAN:-0}" = 1 ] && { note "done (lean)"; exit 0; }
HEARTH_CUDA_MMQ_F16=17 HEARTH_CUDA_MMQ_WGMMA=1 timeout 100 $HB concurrent $M/8b.gguf --device cuda --streams 64 --tokens 64 \
  --profile >/dev/null 2>$OUT/profile64_wg.txt
note "profile (64 streams, wgmma): $(head -c 1200 $OUT/profile64_wg.txt | tr '\n' '|')"
head -c 8000 tests/peer/data/public_domain.txt >$W/ppl.txt
for ctx in 512; do
  for run in "1 2 1" "1 0 0" "0 0 0"; do
    set -- $run
    r=$(HEARTH_CUDA_MMQ=$1 HEARTH_CUDA_MMQ_MAX_TOKENS=512 HEARTH_CUDA_MMQ_F16=$2 HEARTH_CUDA_MMQ_WGMMA=$3 timeout 60 \
      $CLI perplexity $M/1b.gguf --file $W/ppl.txt --ctx $ctx --device cuda --json 2>>$W/err.log | tail -1)
    note "ppl llama-1b Q4_0 ctx $ctx mmq=$1 f16=$2 wgmma=$3: $(echo "$r" | python3 -c 'import json,sys; print(json.load(sys.stdin)["perplexity"])' 2>&1)"
  done
done
if [ "${LLAMA:-0}" = 1 ] && llama_batched $M/8b.gguf; then
  conc 64 0 0
  conc 64 17 1
fi
cp $W/err.log $OUT/ 2>/dev/null
note "done"
