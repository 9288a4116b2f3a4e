#!/usr/bin/env bash
# Builds the fuzzers (the `fuzz` preset: clang, ASan + UBSan), writes their seed
# corpora at run time (no model bytes are committed) and fuzzes each target for
# an equal share of SECONDS (default 60). Exits non-zero when libFuzzer finds a
# crash, leak or timeout in any target; the reproducer is left in
# build/fuzz/fuzz-artifacts/TARGET/ and the last lines of its log are printed.
#   fuzz/run.sh [SECONDS] [TARGET...]      (default: every target)
set -euo pipefail
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_gguf fuzz_tokenizer fuzz_chat_template fuzz_json_request fuzz_openai_request
  fuzz_remote_stream)
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target "${targets[@]}" fuzz_gguf_seeds >/dev/null

build="$root/build/fuzz"
share=$(( seconds / ${#targets[@]} ))
[ "$share" -ge 1 ] || share=1

# Seeds per target (read-only inputs; new inputs go to the kept corpus folder).
seed_dir() {
  local t="$1" dir="$build/fuzz-seeds/$1"
  rm -rf "$dir"
  mkdir -p "$dir"
  case "$t" in
    fuzz_gguf) "$build/fuzz/fuzz_gguf_seeds" "$dir" >/dev/null ;;
    fuzz_chat_template)
      cp "$root"/tests/engine/chat/templates/*.jinja "$dir"/
      cp "$root"/fuzz/seeds/chat_template/*.jinja "$dir"/  # the hostile cases of issue 14
      ;;
    fuzz_json_request) cp "$root"/fuzz/seeds/json_request/*.json "$dir"/ ;;
    fuzz_openai_request)
      # The first byte picks the endpoint (even: chat, odd: completions): each seed under both.
      for f in "$root"/fuzz/openai_request_seeds/*.json; do
        for sel in 00 01; do { printf "\\x$sel"; cat "$f"; } >"$dir/$(basename "$f" .json)-$sel"; done
      done
      ;;
    fuzz_remote_stream)
      # First byte: response kind (low 2 bits) and piece size; then the body.
      printf '\x00data: {"choices":[{"delta":{"content":"Hi"},"finish_reason":null}]}\n\ndata: [DONE]\n\n' >"$dir/sse"
      printf '\x0dda\r\nta: {"choices":[{"delta":{},"finish_reason":"length"}],"usage":{"prompt_tokens":3}}\r\n\r\n' >"$dir/crlf"
      printf '\x01{"choices":[{"message":{"content":"x"},"finish_reason":"stop"}]}' >"$dir/whole"
      printf '\x02{"error":{"message":"slow down","type":"rate_limit"}}' >"$dir/error"
      printf '\x03{"object":"list","data":[{"id":"m"}]}' >"$dir/models"
      ;;
    fuzz_tokenizer)
      # One text per snippet line, for the encode side of each vocabulary
      # (first byte: vocabulary in the high nibble, operation in bit 3).
      local i=0
      while IFS= read -r line; do
        for sel in 00 13 20 22; do printf "\\x$sel%s" "$line" >"$dir/snippet-$i-$sel"; done
        i=$((i + 1))
      done <"$root/tests/engine/tokenizer/corpus_snippets.txt"
      ;;
  esac
  echo "$dir"
}

failed=()
for t in "${targets[@]}"; do
  seeds="$(seed_dir "$t")"
  corpus="$build/fuzz-corpus/$t"
  artifacts="$build/fuzz-artifacts/$t"
  log="$build/fuzz-logs/$t.log"
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  max_len=4096
  extra=()
  case "$t" in
    fuzz_gguf) max_len=131072 ;;
    fuzz_chat_template) max_len=262144; extra=(-dict="$root/fuzz/jinja.dict") ;;
    fuzz_json_request) max_len=262144 ;;
  esac
  if "$build/fuzz/$t" "$corpus" "$seeds" "${extra[@]}" -max_total_time="$share" -max_len="$max_len" -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/" >"$log" 2>&1; then
    runs=$(grep -m1 '^stat::number_of_executed_units' "$log" | awk '{print $2}')
    cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -n 1)
    echo "$t: OK, ${runs:-?} executions in ${share}s, ${cov:-cov ?}, $(ls "$corpus" | wc -l) corpus inputs"
  else
    failed+=("$t")
    echo "$t: FAILED (log $log, reproducer in $artifacts/)"
    grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -n 8 || tail -n 20 "$log"
  fi
done
[ ${#failed[@]} -eq 0 ] || { echo "fuzz failures: ${failed[*]}"; exit 1; }
