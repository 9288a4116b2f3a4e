#!/bin/bash
# One device call for issue 20, v17/v18: mmq with f16 activations on the f16
# tensor cores (v18: kernels/cuda/mmq_f16.cu, weights streamed by bulk copies)
# against the int8 one.
# Starts llama.cpp's build in the background (for a later call on the same
# warm machine), builds Hearth's engine-only targets in /tmp/bgpu, runs the
# mmq kernel tests (both kinds), the GEMV tests (the staged one shares the
# bulk copies), the 16-stream batch-vs-solo engine tests and
# the graph tests, the mmq micro-benchmark (f16 / q8 / f16 path + cuBLAS),
# hearth-bench concurrent at 16 and 64 streams with HEARTH_CUDA_MMQ_F16=17
# (f16 from 17 rows), 0 (q8 only) and 2 (f16 from 2 rows) interleaved, a
# --profile at 64 streams, ncu sections of both kernels at 14336 x 4096 x 64
# (where ncu exists), perplexity of a synthetic llama-1b Q4_0 file on CUDA
# with every product through mmq (each kind, windows of 512 and 64) or the
# f16 path, and
# llama-batched-bench at 16 and 64 once llama.cpp's build is done.
# Needs PCRE2 in .deps/pcre2 (merged_check.sh). NCU=0 skips ncu, LLAMA=0
# llama.cpp, SHORT=1 the engine tests and the profiles; MODE=quick skips the
# micro-benchmark and the perplexity.
cd "$(dirname "$0")/../.."
source bench/gpu/device_env.sh
[ "${LLAMA:-1}" = 1 ] && note "$(start_llama_build llama-batched-bench llama-bench)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader | tee -a "$S"
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEARTH_ENGINE_ONLY=ON -DHEARTH_CUDA_ARCHITECTURES=90 \
  >$W/cfg.log 2>&1 || { tail -30 $W/cfg.log; exit 1; }
TARGETS="hearth-cli hearth-bench kernels_cuda_test kernels_cuda_bench"
[ "${SHORT:-0}" = 1 ] || TARGETS="$TARGETS engine_runtime_cuda_test models_llama_cuda_test"
cmake --build $B -j16 --target $TARGETS >$W/build.log 2>&1 || { grep -m5 -A12 -E "error|FAILED" $W/build.log; exit 1; }
note "built"
CLI=$B/cli/hearth-cli
HB=$B/bench/engine/hearth-bench
(
  [ -f $M/8b.gguf ] || $CLI synth --shape llama-8b --quant Q4_0 -o $M/8b.gguf
  [ -f $M/1b.gguf ] || $CLI synth --shape llama-1b --quant Q4_0 -o $M/1b.gguf
) >$W/synth.log 2>&1 &
SYN=$!
t() { # BINARY FILTER
  timeout 150 $B/tests/$1 --gtest_brief=1 --gtest_filter="$2" >$W/t.log 2>&1
  note "$(basename $1) $2 rc $?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED TEST' $W/t.log | tr '\n' ' ')"
  grep -E "Failure|Which is|differs|compared|Expected|actual" $W/t.log | head -12 | tee -a "$S"
  cat $W/t.log >>$OUT/tests.log
}
t kernels/cuda/kernels_cuda_test 'CudaMmq*'
t kernels/cuda/kernels_cuda_test 'CudaGemv*'
if [ "${SHORT:-0}" != 1 ]; then
  HEARTH_CUDA_MMQ_F16=2 t engine/runtime/engine_runtime_cuda_test '*OnTensorCores*'
  t engine/runtime/engine_runtime_cuda_test '*Sixteen*'
  t models/cuda/models_llama_cuda_test '*Graph*'
fi
if [ "${MODE:-full}" = full ]; then
  if [ "${BENCH:-all}" = short ]; then  # the 8B shapes at 16, 32 and 64 rows (Q4_0)
    for shape in "4096 4096" "14336 4096" "4096 14336" "28672 4096"; do
      for n in 16 32 64; do
        timeout 30 $B/tests/kernels/cuda/kernels_cuda_bench mmq $shape $n >>$OUT/mmq_bench.txt 2>&1
      done
    done
  else
    timeout 200 $B/tests/kernels/cuda/kernels_cuda_bench mmq >$OUT/mmq_bench.txt 2>&1
  fi
  note "kernels_cuda_bench mmq rc $?"
  cat $OUT/mmq_bench.txt | tee -a "$S"
fi
wait $SYN
conc() { # N F16 (HEARTH_CUDA_MMQ_F16: "" default, 0 q8 only, 2 f16 from 2 rows)
  local v
  v=$(HEARTH_CUDA_MMQ_F16=$2 timeout 100 $HB concurrent $M/8b.gguf --device cuda --streams $1 --tokens 128 --json \
    2>>$W/err.log | python3 -c "import json,sys; j=json.load(sys.stdin); print('%.1f' % j['aggregate_decode_tps'])" 2>&1)
  note "$1 streams, HEARTH_CUDA_MMQ_F16='$2': aggregate decode $v tok/s"
}
for r in $(seq ${ROUNDS:-2}); do
  for n in 16 64; do
    conc $n 17
    conc $n 0
    conc $n 2
  done
done
for f in $([ "${SHORT:-0}" = 1 ] || echo 17 0); do
  HEARTH_CUDA_MMQ_F16=$f timeout 100 $HB concurrent $M/8b.gguf --device cuda --streams 64 --tokens 64 --profile \
    >/dev/null 2>$OUT/profile64_f16_$f.txt
  note "profile (64 streams, f16='$f'): $(head -c 1200 $OUT/profile64_f16_$f.txt | tr '\n' '|')"
done
if [ "${NCU:-1}" = 1 ] && command -v ncu >/dev/null; then
  for k in mmq_f16_kernel mmq_kernel; do
    timeout 120 ncu --kernel-name regex:"$k" --launch-skip 3 --launch-count 1 --section SpeedOfLight \
      --section WarpStateStats --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
      --section ComputeWorkloadAnalysis $B/tests/kernels/cuda/kernels_cuda_bench mmq 14336 4096 64 >$OUT/ncu_$k.txt 2>&1
    note "ncu $k rc $?: $(grep -E 'Duration|Throughput|Stall|Warp Cycles|Issued|Achieved Occupancy|Registers|Block Limit|Bank' $OUT/ncu_$k.txt | head -40 | tr -s ' ' | tr '\n' '|')"
  done
else
  note "no ncu"
fi
if [ "${MODE:-full}" = full ]; then
  head -c 8000 tests/peer/data/public_domain.txt >$W/ppl.txt
  # Every product of the windows through mmq (HEARTH_CUDA_MMQ_MAX_TOKENS=512), each kind, and the f16 path.
  for ctx in 512 64; do
    for run in "1 2" "1 0" "0 0"; do
      set -- $run
      r=$(HEARTH_CUDA_MMQ=$1 HEARTH_CUDA_MMQ_MAX_TOKENS=512 HEARTH_CUDA_MMQ_F16=$2 timeout 60 $CLI perplexity $M/1b.gguf \
        --file $W/ppl.txt --ctx $ctx --device cuda --json 2>>$W/err.log | tail -1)
      note "ppl llama-1b Q4_0 ctx $ctx mmq=$1 f16=$2: $(echo "$r" | python3 -c 'import json,sys; print(json.load(sys.stdin)["perplexity"])' 2>&1)"
    done
  done
fi
if [ "${LLAMA:-1}" = 1 ] && llama_batched $M/8b.gguf; then
  conc 16 17
  conc 64 17
fi
cp $W/err.log $OUT/ 2>/dev/null
note "done"
