#!/bin/bash
# One device call for issue 19 (profiling, overflow check): build the gpu
# preset's targets that matter, run the gpu-labelled profile/ops/graph tests,
# and profile a SmolLM2-shape synthetic model on CUDA (JSON and trace under
# $OUT), the boosted-layer model through --check-overflow, and decode tok/s
# with profiling off (graphs) and on (eager, events). Needs PCRE2 in
# .deps/pcre2 (see merged_check.sh). Run from the tree's root.
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
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEARTH_ENGINE_ONLY=ON -DHEARTH_CUDA_ARCHITECTURES=90 \
  >$OUT/cfg.log 2>&1 || { tail -30 $OUT/cfg.log; exit 1; }
cmake --build $B -j16 --target hearth-cli models_profile_cuda_test >$OUT/build.log 2>&1 ||
  { grep -m5 -A12 -E "error|FAILED" $OUT/build.log; exit 1; }
note "built at $(el)"
# The other gpu tests build while the first checks run.
cmake --build $B -j8 --target engine_backend_cuda_ops_test models_llama_cuda_test >$OUT/build2.log 2>&1 &
BUILD2=$!
CLI=$B/cli/hearth-cli
M=/tmp/synth
mkdir -p $M
$CLI synth --shape smollm2-135m --quant Q4_1 -o $M/smol.gguf >$OUT/synth.log 2>&1
$CLI profile $M/smol.gguf --device cuda -n 32 --json --trace $OUT/trace_cuda.json >$OUT/profile_cuda.json 2>$OUT/profile_err.log
note "profile --json: rc $? $(python3 -c 'import json; j=json.load(open("'$OUT'/profile_cuda.json")); print("steps", j["n_steps"], "forward_us %.0f host_wait_us %.0f gpu_idle_us %.0f decode_tps %.1f entries %d" % (j["forward_us"], j["host_wait_us"], j["gpu_idle_us"], j["decode_tps"], len(j["entries"])))' 2>&1)"
python3 -c 'import json; t=json.load(open("'$OUT'/trace_cuda.json")); print("trace events", len(t["traceEvents"]))' >>"$S" 2>&1
$CLI profile $M/smol.gguf --device cuda -n 32 >$OUT/profile_table.txt 2>&1
$B/tests/models/models_profile_cuda_test >$OUT/profile_test.log 2>&1
note "models_profile_cuda_test at $(el): $(grep -E '^\[  PASSED|^\[  FAILED|SKIPPED' $OUT/profile_test.log | tr '\n' ' ')"
$CLI synth --shape custom --embd 256 --layers 3 --heads 4 --kv-heads 2 --ffn 512 --vocab 600 --ctx 512 --quant F32 \
  --boost-layer 2 --boost 1000 -o $M/boost.gguf >>$OUT/synth.log 2>&1
$CLI generate $M/boost.gguf --device cuda --prompt hello -n 2 --json --check-overflow >$OUT/overflow_cuda.json 2>$OUT/overflow_err.log
note "overflow (boosted layer 2): $(tail -1 $OUT/overflow_cuda.json | python3 -c 'import json,sys; print(json.load(sys.stdin)["overflow"])' 2>&1)"
$CLI generate $M/smol.gguf --device cuda --prompt hello -n 4 --json --check-overflow 2>/dev/null | tail -1 >$OUT/overflow_clean.json
note "overflow (smol synthetic): $(python3 -c 'import json; print(json.load(open("'$OUT'/overflow_clean.json"))["overflow"])' 2>&1)"
tps() { python3 -c 'import json,sys; print("decode_tps %.1f" % json.loads(sys.stdin.read().strip().splitlines()[-1])["decode_tps"])' 2>&1; }
note "off (graphs): $($CLI generate $M/smol.gguf --device cuda --prompt 'hello world' --temp 0 -n 128 --json 2>/dev/null | tps)"
note "off (no graphs): $(HEARTH_CUDA_GRAPH=0 $CLI generate $M/smol.gguf --device cuda --prompt 'hello world' --temp 0 -n 128 --json 2>/dev/null | tps)"
note "profiling on: $($CLI profile $M/smol.gguf --device cuda --prompt 'hello world' -n 128 --json 2>/dev/null | tps)"
note "off (graphs) again: $($CLI generate $M/smol.gguf --device cuda --prompt 'hello world' --temp 0 -n 128 --json 2>/dev/null | tps)"
wait $BUILD2
note "built the rest at $(el): rc $?"
$B/tests/engine/backend/engine_backend_cuda_ops_test >$OUT/ops_test.log 2>&1
note "engine_backend_cuda_ops_test: $(grep -E '^\[  PASSED|^\[  FAILED' $OUT/ops_test.log | tr '\n' ' ')"
timeout 60 $B/tests/models/cuda/models_llama_cuda_test --gtest_filter='*Graph*:*LayerTim*' >$OUT/graph_test.log 2>&1
note "models_llama_cuda_test (graphs, layer timing): $(grep -E '^\[  PASSED|^\[  FAILED' $OUT/graph_test.log | tr '\n' ' ')"
note "done at $(el)"
