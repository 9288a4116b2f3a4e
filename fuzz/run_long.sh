#!/usr/bin/env bash
# The scheduled long fuzzing run (not part of CI): every target (or those
# named) for MINUTES each (default 60), one after the other. The grown corpus
# of each target is kept between runs in fuzz-corpus/TARGET at the repository
# root (git-ignored; HEARTH_FUZZ_CORPUS moves it), so each run starts where the
# last one stopped. A finding does not end the target's turn: the reproducer is
# kept in fuzz-corpus/artifacts/TARGET/ and libFuzzer starts again for the time
# left (at most 8 findings per target). Prints, and appends to
# fuzz-corpus/summary.txt, one line per target: executions, exec/s, coverage
# (cov: edges, ft: features), corpus size, findings with their reproducers.
# Exits non-zero when any target had a finding.
#   nice fuzz/run_long.sh [MINUTES] [TARGET...]
set -euo pipefail
minutes="${1:-60}"
shift || true
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build/fuzz"
source "$root/fuzz/targets.sh"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${fuzz_targets[@]}")
store="${HEARTH_FUZZ_CORPUS:-$root/fuzz-corpus}"
cd "$root"

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target "${targets[@]}" fuzz_gguf_seeds >/dev/null

per=$(( minutes * 60 ))
summary="$store/summary.txt"
mkdir -p "$store"
echo "# fuzz/run_long.sh $minutes min per target, $(date -u '+%Y-%m-%d %H:%M UTC'), $(git rev-parse --short HEAD)" \
  | tee -a "$summary"
found_any=0
for t in "${targets[@]}"; do
  seeds="$(fuzz_seed_dir "$t")"
  corpus="$store/$t"
  artifacts="$store/artifacts/$t"
  logs="$store/logs/$t"
  mkdir -p "$corpus" "$artifacts" "$logs"
  rm -f "$logs"/*.log
  fuzz_options "$t"
  start=$SECONDS
  end=$(( start + per ))
  runs=0 cov="?" ft="?" findings=()
  for attempt in 1 2 3 4 5 6 7 8 9; do
    left=$(( end - SECONDS ))
    [ "$left" -gt 0 ] && [ ${#findings[@]} -lt 8 ] || break
    log="$logs/$attempt.log"
    if "$build/fuzz/$t" "$corpus" "$seeds" "${fuzz_args[@]}" -max_total_time="$left" \
        -artifact_prefix="$artifacts/" >"$log" 2>&1; then
      ok=1
    else
      ok=0
    fi
    read -r n c f <<<"$(fuzz_stats "$log")"
    runs=$(( runs + n ))
    [ "$c" = "?" ] || { cov=$c; ft=$f; }
    [ "$ok" -eq 1 ] && break
    # What libFuzzer found and where it wrote the input (none when it died otherwise).
    what=$(grep -m1 -oE 'ERROR: [A-Za-z]+: [-A-Za-z ]+|runtime error: .*|ALARM: .*|out-of-memory.*' "$log" || echo "exit without a report (log $log)")
    unit=$(grep -m1 -oE 'Test unit written to .*' "$log" | awk '{print $NF}' || true)
    findings+=("$what: ${unit:-no reproducer} (log $log)")
  done
  elapsed=$(( SECONDS - start ))
  [ "$elapsed" -ge 1 ] || elapsed=1
  line="$t: $runs executions in ${elapsed}s ($(( runs / elapsed )) exec/s), cov: $cov ft: $ft, corpus $(ls "$corpus" | wc -l) inputs ($(du -sh "$corpus" | cut -f1)), ${#findings[@]} findings"
  echo "$line" | tee -a "$summary"
  for x in "${findings[@]}"; do echo "  $x" | tee -a "$summary"; done
  [ ${#findings[@]} -eq 0 ] || found_any=1
done
exit "$found_any"
