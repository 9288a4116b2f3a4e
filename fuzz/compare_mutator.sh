#!/usr/bin/env bash
# Measures what the structure-aware template mutator (jinja_mutator.cpp) pays:
# fuzz_chat_template and its byte-mutation twin fuzz_chat_template_plain each
# run RUNS executions from the same seeds, dictionary and libFuzzer -seed, into
# a fresh corpus, once per SEED; prints the coverage each reached (cov: edges,
# ft: features), the corpus it grew and the time it took.
#   nice fuzz/compare_mutator.sh [RUNS] [SEED...]   (default 20000; seeds 1 2 3)
set -euo pipefail
n="${1:-20000}"
shift || true
seeds=("$@")
[ ${#seeds[@]} -gt 0 ] || seeds=(1 2 3)
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build/fuzz"
source "$root/fuzz/targets.sh"
cd "$root"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target fuzz_chat_template fuzz_chat_template_plain >/dev/null
seed_dir="$(fuzz_seed_dir fuzz_chat_template)"
fuzz_options fuzz_chat_template
work="$build/fuzz-compare"
for s in "${seeds[@]}"; do
  for t in fuzz_chat_template fuzz_chat_template_plain; do
    rm -rf "${work:?}/$t-$s"
    mkdir -p "$work/$t-$s/corpus"
    log="$work/$t-$s/log"
    start=$SECONDS
    "$build/fuzz/$t" "$work/$t-$s/corpus" "$seed_dir" "${fuzz_args[@]}" -runs="$n" -seed="$s" \
      -artifact_prefix="$work/$t-$s/" >"$log" 2>&1 || echo "$t seed $s: finding, see $log"
    read -r runs cov ft <<<"$(fuzz_stats "$log")"
    echo "$t seed $s: $runs executions in $(( SECONDS - start ))s, cov: $cov ft: $ft, corpus +$(ls "$work/$t-$s/corpus" | wc -l)"
  done
done
