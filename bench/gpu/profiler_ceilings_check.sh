#!/bin/bash
# One device call for issue 19's roofline: build the gpu preset's profile
# targets, run the roofline and profile tests (CPU and CUDA), and print the
# measured ceilings and each kernel kind's achieved rates from
# `hearth-cli profile --json` on a SmolLM2-shape and a Llama-3-8B-shape
# synthetic model on CUDA (and the small one on the CPU). Needs PCRE2 in
# .deps/pcre2 (see merged_check.sh) and the call carrying [".deps"].
cd "$(dirname "$0")/../.."
source bench/gpu/device_env.sh
cmake --preset gpu >"$OUT/cfg.log" 2>&1 || { tail -30 "$OUT/cfg.log"; exit 1; }
cmake --build build/gpu -j16 --target hearth-cli models_profile_test models_profile_cuda_test engine_roofline_test \
  >"$OUT/build.log" 2>&1 || { grep -m8 -A12 -E "error|FAILED" "$OUT/build.log"; exit 1; }
echo "built at $(el)"
for t in tests/engine/metrics/engine_roofline_test tests/models/models_profile_test tests/models/models_profile_cuda_test; do
  build/gpu/$t >"$OUT/$(basename $t).log" 2>&1
  echo "$(basename $t): rc $? $(grep -E '^\[  PASSED|^\[  FAILED' "$OUT/$(basename $t).log" | tr '\n' ' ')"
done
CLI=build/gpu/cli/hearth-cli
$CLI synth --shape smollm2-135m --quant Q4_1 -o /tmp/smol.gguf >/dev/null 2>&1
$CLI synth --shape llama-8b --quant Q4_0 -o /tmp/8b.gguf >/dev/null 2>&1
summary() {
  python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
c = j["ceilings"]
print("  ceilings %.1f GB/s, %.1f TFLOP/s (%s)" % (c["bytes_per_s"] / 1e9, c["flops_per_s"] / 1e12, c["source"]))
print("  decode %.1f tok/s (profiled), %d steps" % (j["decode_tps"], j["n_steps"]))
for k, r in j["kernel_rates"].items():
    print("  %-12s %9.1f us %8.1f GB/s %8.2f TFLOP/s  %5.1f%% of the ceiling" % (k, r["duration_us"], r["achieved_bytes_per_s"] / 1e9, r["achieved_flops_per_s"] / 1e12, 100 * r["ceiling_fraction"]))
' "$1"
}
for m in smol 8b; do
  $CLI profile /tmp/$m.gguf --device cuda -n 32 --json >"$OUT/profile_$m.json" 2>"$OUT/profile_$m.err"
  echo "cuda $m: rc $?"; summary "$OUT/profile_$m.json"
done
$CLI profile /tmp/smol.gguf --device cpu -n 8 --json >"$OUT/profile_cpu.json" 2>"$OUT/profile_cpu.err"
echo "cpu smol: rc $?"; summary "$OUT/profile_cpu.json"
rm -f "$OUT"/profile_*.json
echo "done at $(el)"
