#!/usr/bin/env bash
# Builds the GGUF reader fuzzer (the `fuzz` preset: clang, ASan + UBSan), writes
# a seed corpus at run time (no model bytes are committed) and fuzzes for
# SECONDS (default 60). Exits non-zero when libFuzzer finds a crash, leak or
# timeout; the reproducer is left in build/fuzz/fuzz-artifacts/.
#   fuzz/run.sh [SECONDS]
set -euo pipefail
seconds="${1:-60}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target fuzz_gguf fuzz_gguf_seeds

build="$root/build/fuzz"
seeds="$build/fuzz-seeds"
corpus="$build/fuzz-corpus"
artifacts="$build/fuzz-artifacts"
rm -rf "$seeds"
mkdir -p "$corpus" "$artifacts"
"$build/fuzz/fuzz_gguf_seeds" "$seeds"
echo "fuzz_gguf: $(ls "$seeds" | wc -l) seeds, running for ${seconds}s"

# New inputs go to the (kept) corpus folder; seeds are read-only inputs.
"$build/fuzz/fuzz_gguf" "$corpus" "$seeds" \
  -max_total_time="$seconds" -max_len=131072 -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$artifacts/"
