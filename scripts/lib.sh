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
