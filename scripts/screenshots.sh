#!/usr/bin/env bash
# Renders the app's main states (empty, chatting, performance dock, dark theme)
# to PNG under Xvfb, into docs/screenshots/. Needs the default model installed
# and a build with the hearth_screenshots target.
#   scripts/screenshots.sh [BUILD_DIR]     (default: build/dev)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build/dev}"
out="$root/docs/screenshots"

cmake --build "$build" --target hearth_screenshots
mkdir -p "$out"
# A fixed screen and font DPI so the pictures do not depend on the host.
xvfb-run --auto-servernum --server-args="-screen 0 1400x900x24 -dpi 96" \
  env QT_QPA_PLATFORM=xcb QT_FONT_DPI=96 "$build/tests/app/hearth_screenshots" "$out"
