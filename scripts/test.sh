#!/usr/bin/env bash
# The one command that sets everything up and runs the whole test suite: the
# install audit (scripts/install-audit.py: every package and Python module the
# build and the tests used is one the set-up installs), the unit, oracle, CLI,
# GUI and packaging tests (ctest), the engine's unit tests under ASan + UBSan
# and TSan (scripts/sanitize.sh), then a bounded fuzzing run.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
"$HEARTH_ROOT/scripts/setup.sh" apt python model test-models build
cd "$HEARTH_ROOT"
say "Auditing the set-up: is everything the build used installed by it?"
.venv/bin/python scripts/install-audit.py --build "build/${HEARTH_PRESET:-dev}" || die "the install audit failed: a package or module the build or the tests use is missing from the set-up's lists"
say "Running the test suite"
ctest --preset dev -j"$(nproc)" || die "tests failed"
if [ "${HEARTH_SKIP_SANITIZERS:-0}" != 1 ]; then
  "$HEARTH_ROOT/scripts/sanitize.sh" || die "the sanitizer pass failed"
fi
if [ -x fuzz/run.sh ]; then
  say "Fuzzing the GGUF reader, the tokenizer, the chat templates and the JSON requests for ${HEARTH_FUZZ_SECONDS:-60} s"
  fuzz/run.sh "${HEARTH_FUZZ_SECONDS:-60}" || die "fuzzing found a problem"
fi
say "All tests passed"
