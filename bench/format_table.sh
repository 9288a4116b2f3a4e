#!/usr/bin/env bash
# The per-model table of docs/benchmarks.md: weight format x KV precision ->
# perplexity (tests/peer/data/public_domain.txt, windows of 512, BOS each),
# single-stream decode and warm 512-token prefill tok/s, and memory (weights,
# KV pool of two full 2048-token contexts, workspace: `hearth-cli estimate`,
# which equals the CPU allocation). One configuration after another, so the
# speeds compare within one run; the machine's load is printed first.
#
# Usage: [KVS="f16 q8_0 fp8"] [MODELS="default gemma3-270m-q4_k_m"] bench/format_table.sh [BUILD_DIR] [DEVICE]
# (default build/dev, cpu; the models by catalog id, from the models folder: HEARTH_MODELS_DIR)
# Models: the default (SmolLM2 135M Q4_1) and Gemma 3 270M Q4_K_M, each as
# stored and converted at load to Q4_0 (the only coarser format both take:
# Gemma's 640-wide rows are not whole K-quant blocks, and its Q4_K tensors
# refuse the finer Q5_0 / Q8_0).
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build/dev}
DEV=${2:-cpu}
CLI=$B/cli/hearth-cli
BENCH=$B/bench/engine/hearth-bench
TEXT=tests/peer/data/public_domain.txt
THREADS=${HEARTH_BENCH_THREADS:-$(nproc)}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); $THREADS threads; device $DEV"
echo
echo "| model | weights | KV | perplexity | decode tok/s | prefill 512 tok/s | weights MiB | KV MiB (2 x 2048 tokens) | total MiB |"
echo "|---|---|---|---|---|---|---|---|---|"
row() { # MODEL LABEL QUANT KV
  local m=$1 label=$2 q=$3 kv=$4 qa=()
  [ -n "$q" ] && qa=(--quant "$q")
  local ppl dec pre est
  ppl=$($CLI perplexity "$m" --file $TEXT --ctx 512 --device "$DEV" --threads "$THREADS" --kv "$kv" "${qa[@]}" --json \
    2>/dev/null | tail -1 | python3 -c 'import json,sys; print("%.4f" % json.load(sys.stdin)["perplexity"])')
  dec=$($BENCH concurrent "$m" --device "$DEV" --threads "$THREADS" --kv "$kv" "${qa[@]}" --streams 1 --tokens 64 \
    --json 2>/dev/null | python3 -c 'import json,sys; print("%.1f" % json.load(sys.stdin)["single_stream_decode_tps"])')
  pre=$($BENCH prefill "$m" --device "$DEV" --threads "$THREADS" --kv "$kv" "${qa[@]}" --tokens 512 --reps 2 --json \
    2>/dev/null | python3 -c 'import json,sys; print("%.1f" % json.load(sys.stdin)["prefill_tps"])')
  est=$($CLI estimate "$m" --device "$DEV" --ctx 2048 --kv "$kv" "${qa[@]}" --json 2>/dev/null | tail -1 |
    python3 -c 'import json,sys; j=json.load(sys.stdin); m=1<<20; print("%.1f | %.1f | %.1f" % (j["weights_bytes"]/m, j["kv_bytes"]/m, j["total_bytes"]/m))')
  echo "| $label | ${q:-as stored} | $kv | $ppl | $dec | $pre | $est |"
}
KVS=${KVS:-"f16 q8_0 fp8"}
MODELS=${MODELS:-"default gemma3-270m-q4_k_m"}
for model in $MODELS; do
  label="SmolLM2 135M (Q4_1)"
  [ "$model" = gemma3-270m-q4_k_m ] && label="Gemma 3 270M (Q4_K_M)"
  for kv in $KVS; do
    row "$model" "$label" "" "$kv"
    row "$model" "$label" Q4_0 "$kv"
  done
done
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
