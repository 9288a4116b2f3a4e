#!/bin/bash
# One device call for issue 20, v16b: decode steps of 9-64 sequences replayed
# from CUDA graphs where mmq takes every product (CudaBackend::
# graph_max_sequences). Starts llama.cpp's build in a session of its own
# (.llama/llama.tgz carried), builds Hearth's engine-only targets in
# /tmp/bgpu, runs the graph and engine GPU tests, then hearth-bench
# concurrent at 16 and 64 streams with HEARTH_CUDA_GRAPH_WIDE=0 (graphs up to
# 8 sequences, v15) and 1, interleaved, twice, a --profile of the 64-stream
# run, the prompt-attention micro-benchmark (kernels_cuda_bench prefill),
# and llama-batched-bench on the same file once its build is done.
# Needs PCRE2 in .deps/pcre2 (merged_check.sh).
cd "$(dirname "$0")/../.."
source bench/gpu/device_env.sh
note "$(start_llama_build llama-batched-bench)"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader | tee -a "$S"
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEARTH_ENGINE_ONLY=ON -DHEARTH_CUDA_ARCHITECTURES=90 \
  >$W/cfg.log 2>&1 || { tail -30 $W/cfg.log; exit 1; }
cmake --build $B -j16 --target hearth-cli hearth-bench models_llama_cuda_test engine_runtime_cuda_test kernels_cuda_bench \
  >$W/build.log 2>&1 || { grep -m5 -A12 -E "error|FAILED" $W/build.log; exit 1; }
note "built"
CLI=$B/cli/hearth-cli
HB=$B/bench/engine/hearth-bench
[ -f $M/8b.gguf ] || $CLI synth --shape llama-8b --quant Q4_0 -o $M/8b.gguf >$W/synth.log 2>&1 &
SYN=$!
for t in models/cuda/models_llama_cuda_test engine/runtime/engine_runtime_cuda_test; do
  timeout 150 $B/tests/$t --gtest_brief=1 >$W/t.log 2>&1
  note "$(basename $t) rc $?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED TEST' $W/t.log | tr '\n' ' ')"
  grep -E "Failure|Which is|differs|compared" $W/t.log | head -10 | tee -a "$S"
  cat $W/t.log >>$OUT/tests.log
done
timeout 90 $B/tests/kernels/cuda/kernels_cuda_bench prefill >$OUT/prefill_bench.txt 2>&1
note "kernels_cuda_bench prefill rc $?:"
cat $OUT/prefill_bench.txt | tee -a "$S"
wait $SYN
conc() { # N WIDE
  local v
  v=$(HEARTH_CUDA_GRAPH_WIDE=$2 timeout 100 $HB concurrent $M/8b.gguf --device cuda --streams $1 --tokens 128 --json \
    2>>$W/err.log | python3 -c "import json,sys; j=json.load(sys.stdin); print('%.1f' % j['aggregate_decode_tps'])" 2>&1)
  note "$1 streams, HEARTH_CUDA_GRAPH_WIDE=$2: aggregate decode $v tok/s"
}
for r in 1 2; do
  for n in 16 64; do
    conc $n 0
    conc $n 1
  done
done
HEARTH_CUDA_GRAPH_WIDE=0 timeout 100 $HB concurrent $M/8b.gguf --device cuda --streams 64 --tokens 64 --profile \
  >/dev/null 2>$OUT/profile64_eager.txt
note "profile (64 streams, eager steps): $(head -c 1500 $OUT/profile64_eager.txt | tr '\n' '|')"
if llama_batched $M/8b.gguf; then
  conc 16 1
  conc 64 1
fi
cp $W/err.log $OUT/ 2>/dev/null
note "done"
