#!/usr/bin/env bash
# The one command that sets everything up and runs Hearth on the default model.
# Until the desktop app exists it prints what `hearth-cli inspect` sees in the model.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
"$HEARTH_ROOT/scripts/setup.sh"
cd "$HEARTH_ROOT"
exec build/${HEARTH_PRESET:-dev}/cli/hearth-cli inspect "${1:-$(python3 scripts/fetch_model.py --print-default-name)}"
