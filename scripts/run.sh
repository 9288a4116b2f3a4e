#!/usr/bin/env bash
# The one command that sets everything up and runs Hearth on the default model:
# the desktop app, or (on a machine without a display) the terminal chat.
# Arguments are passed to the app (e.g. a model path or catalog name).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
"$HEARTH_ROOT/scripts/setup.sh"
cd "$HEARTH_ROOT"
build="build/${HEARTH_PRESET:-dev}"
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] || [[ " $* " == *" -platform "* ]]; then
  exec "$build/app/hearth" "$@"
fi
say "No display found (DISPLAY and WAYLAND_DISPLAY are unset): starting the terminal chat instead"
exec "$build/cli/hearth-cli" chat "${1:-$(python3 scripts/fetch_model.py --print-default-name)}"
