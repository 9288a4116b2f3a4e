#!/usr/bin/env bash
# The scheduled long fuzzing run (not part of CI): the input-parsing targets
# for an hour each by default, keeping the grown corpora in build/fuzz/.
#   fuzz/run_long.sh [SECONDS_PER_TARGET]   (default 3600)
set -euo pipefail
per="${1:-3600}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
targets=(fuzz_chat_template fuzz_json_request fuzz_gguf fuzz_tokenizer)
exec "$here/run.sh" $(( per * ${#targets[@]} )) "${targets[@]}"
