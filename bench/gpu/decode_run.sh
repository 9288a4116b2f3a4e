#!/usr/bin/env bash
# One device call's worth of CUDA decode work, run from the repository root on
# the GPU machine (engine-only `gpu` preset; PCRE2 from .deps/pcre2, which
# that machine lacks: see docs/perf-notes.md). Phases, in the order given:
#   build   configure + build the CUDA tests, the kernel benchmark, hearth-cli
#   test    ctest -L gpu (kernel and model tests on the GPU)
#   kbench  kernels_cuda_bench (GEMV GB/s, f32 vs 8-bit activations)
#   e2e     8B-shape synthetic Q4_0 and Q4_K_M: decode tok/s with
#           HEARTH_CUDA_GEMV=f32 (the precise path, the default) and =q8 (8-bit)
#   prof    ncu: GPU time per kernel over two 8B Q4_0 decode steps
#   ncu     ncu --set full of the q8 GEMV at two shapes
#   sanit   compute-sanitizer memcheck on the GEMV tests
# Logs go to $OUT (or /tmp/hearth-out); a summary is printed last.
set -uo pipefail
OUT=${OUT:-/tmp/hearth-out}
mkdir -p "$OUT"
ROOT=$(pwd)
P=$ROOT/.deps/pcre2
export PKG_CONFIG_SYSROOT_DIR=$P PKG_CONFIG_PATH=$P/usr/lib/x86_64-linux-gnu/pkgconfig
export LD_LIBRARY_PATH=$P/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
B=$ROOT/build/gpu
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
note() { echo "$*" | tee -a "$SUMMARY"; }
stamp() { date +%s.%N; }

phase_build() {
  local t0; t0=$(stamp)
  cmake --preset gpu >"$OUT/build.log" 2>&1 || { note "configure FAILED"; tail -30 "$OUT/build.log"; return 1; }
  cmake --build "$B" -j16 --target kernels_cuda_test kernels_cuda_bench hearth-cli models_llama_cuda_test \
    >>"$OUT/build.log" 2>&1 || { note "build FAILED"; grep -E "error|Error" "$OUT/build.log" | head -40; return 1; }
  note "build ok in $(awk "BEGIN{print $(stamp) - $t0}") s"
}

phase_test() {
  (cd "$B" && ctest -L gpu -LE gpu-bench --output-on-failure -j2) >"$OUT/ctest.log" 2>&1
  note "ctest: $(grep -E 'tests passed|tests failed' "$OUT/ctest.log")"
  grep -E "Failed|FAILED|\*\*\*" "$OUT/ctest.log" | head -20 | tee -a "$SUMMARY"
  "$B/tests/kernels/cuda/kernels_cuda_test" --gtest_filter='CudaGemvQ8*' >"$OUT/q8.log" 2>&1
  grep rel_l2_vs_exact "$OUT/q8.log" | sort -t: -k2 -g | tail -3 | sed 's/^/worst /' | tee -a "$SUMMARY"
}

phase_kbench() {
  "$B/tests/kernels/cuda/kernels_cuda_bench" >"$OUT/kbench.log" 2>&1
  cat "$OUT/kbench.log" | tee -a "$SUMMARY"
}

decode() {  # decode FILE LABEL [env...]
  local f=$1 label=$2; shift 2
  local line
  line=$(env "$@" "$B/cli/hearth-cli" generate "$f" --device cuda --prompt "hello world" --temp 0 -n 128 --json 2>>"$OUT/e2e.err" | tail -1)
  note "$label: $(echo "$line" | grep -o '"decode_tps":[0-9.]*')"
}

phase_e2e() {
  local d=/tmp/hearth-synth q rep
  mkdir -p $d
  for q in Q4_0 Q4_K_M; do
    [ -f $d/$q.gguf ] || "$B/cli/hearth-cli" synth --shape llama-8b --quant $q -o $d/$q.gguf >>"$OUT/e2e.err" 2>&1
    for rep in 1 2; do
      decode $d/$q.gguf "8B $q f32-act      " HEARTH_CUDA_GEMV=f32
      decode $d/$q.gguf "8B $q q8-act       " HEARTH_CUDA_GEMV=q8
      if [ -n "${AB:-}" ]; then decode $d/$q.gguf "8B $q q8-act $AB" HEARTH_CUDA_GEMV=q8 $AB; fi
    done
  done
}

# ncu of two decode steps of the 8B Q4_0 file: GPU time per kernel (MODE: the
# HEARTH_CUDA_GEMV value).
phase_prof() {
  local f=/tmp/hearth-synth/Q4_0.gguf
  mkdir -p /tmp/hearth-synth
  [ -f $f ] || "$B/cli/hearth-cli" synth --shape llama-8b --quant Q4_0 -o $f >>"$OUT/e2e.err" 2>&1
  HEARTH_CUDA_GEMV=${MODE:-q8} ncu --clock-control none --metrics gpu__time_duration.sum --launch-skip 3000 \
    --launch-count 1000 --csv --log-file "$OUT/ncu.csv" "$B/cli/hearth-cli" generate $f --device cuda \
    --prompt "hello world" --temp 0 -n 16 >/dev/null 2>>"$OUT/e2e.err"
  python3 bench/gpu/kernel_profile.py "$OUT/ncu.csv" | head -30 | tee -a "$SUMMARY"
}

# ncu's full report of the q8 GEMV at two shapes (the 11th q8 launch: past warm-up).
phase_ncu() {
  for shape in "Q4_0 4096 4096" "Q4_0 4096 14336"; do
    ncu --clock-control none --set full --kernel-name regex:gemv_q8 --launch-skip 10 --launch-count 1 \
      "$B/tests/kernels/cuda/kernels_cuda_bench" $shape >"$OUT/ncu.tmp" 2>&1
    cat "$OUT/ncu.tmp" >>"$OUT/ncu_full.txt"
    grep -E "Duration|DRAM Throughput|Memory Throughput|L1/TEX Hit|L2 Hit|Achieved Occupancy|Registers Per|Compute \(SM\) Throughput|Issue Slots Busy|uncoalesced|Warp Cycles Per Issued|Theoretical Occupancy" \
      "$OUT/ncu.tmp" | head -24 | sed "s/^/[$shape] /" | tee -a "$SUMMARY"
  done
  rm -f "$OUT/ncu.tmp"
}

phase_sanit() {
  compute-sanitizer --tool memcheck --report-api-errors no "$B/tests/kernels/cuda/kernels_cuda_test" \
    --gtest_filter='CudaGemv*:CudaRmsnorm*' >"$OUT/sanit.tmp" 2>&1
  note "sanitizer: $(grep -E 'ERROR SUMMARY' "$OUT/sanit.tmp" | tail -1)"
  cat "$OUT/sanit.tmp" >>"$OUT/q8.log"
  rm -f "$OUT/sanit.tmp"
}

for p in "${@:-build test kbench e2e}"; do
  for phase in $p; do
    t0=$(stamp)
    "phase_$phase" || { note "phase $phase failed"; break 2; }
    note "[$phase: $(awk "BEGIN{print $(stamp) - $t0}") s]"
  done
done
echo "==== summary"
cat "$SUMMARY"
