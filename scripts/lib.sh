# Shared helpers of Hearth's set-up scripts (sourced, not run).
# Every step says what it does, skips itself when its work is already done,
# and stops the script with a clear message when it fails.

HEARTH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'hearth setup: error: %s\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    die "need root (or sudo) to run: $*"
  fi
}

# Why build/PRESET must be configured (again), or nothing when it is usable: a
# configure that failed half-way leaves a CMakeCache.txt but no build.ninja,
# and a build folder copied from another checkout points at that tree.
configure_reason() {
  local dir=$1 home
  [ -f "$dir/CMakeCache.txt" ] || { echo "no build folder yet"; return; }
  [ -f "$dir/build.ninja" ] || { echo "the last configure did not finish (no build.ninja)"; return; }
  home=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$dir/CMakeCache.txt")
  [ "$home" = "$HEARTH_ROOT" ] || { echo "the build folder belongs to another source tree ($home)"; return; }
}

# configure_and_build PRESET [TARGET...]: configures the preset's build folder
# when it needs it (saying why), then builds it (or only TARGETs). The folder is
# build/PRESET, or $HEARTH_BUILD_DIR when set (the set-up's own test uses that).
configure_and_build() {
  local preset=$1 dir reason log
  shift
  dir=${HEARTH_BUILD_DIR:-$HEARTH_ROOT/build/$preset}
  reason=$(configure_reason "$dir")
  if [ -n "$reason" ]; then
    say "Configuring (preset $preset): $reason"
    # A stale cache is what made the last configure fail or point elsewhere: start clean.
    [ -f "$dir/CMakeCache.txt" ] && rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"
    mkdir -p "$dir"
    log="$dir/configure.log"
    if ! (cd "$HEARTH_ROOT" && cmake --preset "$preset" -B "$dir") >"$log" 2>&1; then
      grep -E 'CMake Error|Could NOT find|could not be found|not found' "$log" | head -8 >&2
      die "cmake configure failed (full log: $log). A missing package is usually the cause: add it to scripts/apt-packages.txt"
    fi
  fi
  say "Building (preset $preset${*:+, targets $*})"
  cmake --build "$dir" ${*:+--target "$@"} -- -j"${HEARTH_JOBS:-$(nproc)}" || die "build failed (preset $preset)"
}
