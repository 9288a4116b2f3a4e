#!/usr/bin/env bash
# The one command that sets everything up and runs the whole test suite:
# the unit, oracle and CLI tests (ctest), the engine's unit tests under ASan +
# UBSan and TSan (scripts/sanitize.sh), then a bounded fuzzing run.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
"$HEARTH_ROOT/scripts/setup.sh"
cd "$HEARTH_ROOT"
say "Running the test suite"
ctest --preset dev -j"$(nproc)" || die "tests failed"
if [ "${HEARTH_SKIP_SANITIZERS:-0}" != 1 ]; then
  "$HEARTH_ROOT/scripts/sanitize.sh" || die "the sanitizer pass failed"
fi
if [ -x fuzz/run.sh ]; then
  say "Fuzzing the GGUF reader, the tokenizer and the chat templates for ${HEARTH_FUZZ_SECONDS:-60} s"
  fuzz/run.sh "${HEARTH_FUZZ_SECONDS:-60}" || die "fuzzing found a problem"
fi
say "All tests passed"
