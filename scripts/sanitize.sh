#!/usr/bin/env bash
# The sanitizer pass of the test suite: the engine's unit tests (CPU kernels,
# KV cache, scheduler, and the runtime on synthetic models: concurrency,
# cancellation, preemption, block accounting) built and run once under
# AddressSanitizer + UndefinedBehaviorSanitizer and once under
# ThreadSanitizer. Engine-only builds (presets asan and tsan); the real-model
# runtime cases are left to the normal build (minutes each under a sanitizer).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$HEARTH_ROOT"
targets=(kernels_cpu_test engine_kv_test engine_scheduler_test engine_runtime_test)
run_tests() {  # $1: build dir
  "$1/tests/kernels/cpu/kernels_cpu_test" --gtest_brief=1
  "$1/tests/engine/kv/engine_kv_test" --gtest_brief=1
  "$1/tests/engine/scheduler/engine_scheduler_test" --gtest_brief=1
  "$1/tests/engine/runtime/engine_runtime_test" --gtest_brief=1 --gtest_filter='-EngineRealModel*'
}
for preset in asan tsan; do
  say "Building the engine's unit tests with the $preset preset"
  cmake --preset "$preset" -DHEARTH_ENGINE_ONLY=ON -DHEARTH_PYTHON="$HEARTH_ROOT/.venv/bin/python" >/dev/null ||
    die "cmake --preset $preset failed"
  cmake --build "build/$preset" -j"$(nproc)" --target "${targets[@]}" >/dev/null || die "the $preset build failed"
  say "Running them under $preset"
  # halt_on_error: the first report fails the run; TSan's second_deadlock_stack for readable reports.
  ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 run_tests "build/$preset" ||
    die "a test failed under $preset"
done
