#!/usr/bin/env bash
# Renders resources/icons/hearth.svg into the hicolor PNG sizes the desktop
# entry, the package and the app's window use. A developer tool: the PNGs are
# committed, so builds need no SVG renderer. Run it after editing the SVG.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$HEARTH_ROOT/resources/icons"
if ! command -v rsvg-convert >/dev/null; then
  say "Installing rsvg-convert (librsvg2-bin)"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends librsvg2-bin \
    || die "could not install librsvg2-bin"
fi
for size in 16 24 32 48 64 128 256 512; do
  rsvg-convert -w "$size" -h "$size" hearth.svg -o "hearth-$size.png" || die "rendering ${size}px failed"
done
say "Rendered $(ls hearth-*.png | wc -l) PNG sizes into resources/icons"
