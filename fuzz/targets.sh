# Sourced by fuzz/run.sh and fuzz/run_long.sh: the fuzz targets, their seed
# corpora (written at run time; no model bytes are committed) and their
# libFuzzer options. Needs $root (the repository) and $build (build/fuzz).

fuzz_targets=(fuzz_gguf fuzz_tokenizer fuzz_chat_template fuzz_json_request fuzz_openai_request fuzz_remote_stream)

# fuzz_seed_dir TARGET: writes TARGET's seeds to a fresh folder and prints its path.
fuzz_seed_dir() {
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

# fuzz_options TARGET: sets fuzz_args, TARGET's libFuzzer options (largest
# input, dictionary) besides the common time and memory limits.
fuzz_options() {
  fuzz_args=(-max_len=4096)
  case "$1" in
    fuzz_gguf) fuzz_args=(-max_len=131072) ;;
    fuzz_chat_template) fuzz_args=(-max_len=262144 -dict="$root/fuzz/jinja.dict") ;;
    fuzz_json_request) fuzz_args=(-max_len=262144) ;;
    fuzz_openai_request) fuzz_args=(-max_len=262144 -dict="$root/fuzz/openai.dict") ;;
  esac
  fuzz_args+=(-timeout=10 -rss_limit_mb=2048 -print_final_stats=1)
}

# fuzz_stats LOG: "EXECUTIONS COV FT" of a libFuzzer log (? when absent).
fuzz_stats() {
  local runs cov
  runs=$(grep -m1 '^stat::number_of_executed_units' "$1" | awk '{print $2}')
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$1" | tail -n 1 | awk '{print $2, $4}')
  echo "${runs:-0} ${cov:-? ?}"
}
