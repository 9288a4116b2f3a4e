#!/usr/bin/env bash
# Builds the fuzzers (the `fuzz` preset: clang, ASan + UBSan), writes their seed
# corpora at run time (no model bytes are committed) and fuzzes each target for
# an equal share of SECONDS (default 60). Exits non-zero when libFuzzer finds a
# crash, leak or timeout in any target; the reproducer is left in
# build/fuzz/fuzz-artifacts/TARGET/ and the last lines of its log are printed.
# The targets, seeds and options are in fuzz/targets.sh; the long scheduled run
# is fuzz/run_long.sh.
#   fuzz/run.sh [SECONDS] [TARGET...]      (default: every target)
set -euo pipefail
seconds="${1:-60}"
shift || true
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build/fuzz"
source "$root/fuzz/targets.sh"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${fuzz_targets[@]}")
cd "$root"

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target "${targets[@]}" fuzz_gguf_seeds >/dev/null

share=$(( seconds / ${#targets[@]} ))
[ "$share" -ge 1 ] || share=1

failed=()
for t in "${targets[@]}"; do
  seeds="$(fuzz_seed_dir "$t")"
  corpus="$build/fuzz-corpus/$t"  # new inputs go here; the seeds stay read-only
  artifacts="$build/fuzz-artifacts/$t"
  log="$build/fuzz-logs/$t.log"
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  fuzz_options "$t"
  if "$build/fuzz/$t" "$corpus" "$seeds" "${fuzz_args[@]}" -max_total_time="$share" \
      -artifact_prefix="$artifacts/" >"$log" 2>&1; then
    read -r runs cov ft <<<"$(fuzz_stats "$log")"
    echo "$t: OK, $runs executions in ${share}s, cov: $cov ft: $ft, $(ls "$corpus" | wc -l) corpus inputs"
  else
    failed+=("$t")
    echo "$t: FAILED (log $log, reproducer in $artifacts/)"
    grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -n 8 || tail -n 20 "$log"
  fi
done
[ ${#failed[@]} -eq 0 ] || { echo "fuzz failures: ${failed[*]}"; exit 1; }
