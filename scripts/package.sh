#!/usr/bin/env bash
# Builds Hearth's Debian package: hearth_<version>_amd64.deb.
# Usage: scripts/package.sh [PRESET]
#   package      (default) a Release build with CUDA for the consumer GPUs and
#                Hopper where the CUDA toolkit is installed (its runtime and
#                cuBLAS travel in the package); CPU-only where it is not
#   package-cpu  a CPU-only package (what the packaging test builds)
# Prints the path of the .deb on its last line.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
preset=${1:-package}
case $preset in package | package-cpu) ;; *) die "unknown packaging preset '$preset' (package or package-cpu)" ;; esac
"$HEARTH_ROOT/scripts/setup.sh" apt
configure_and_build "$preset"
dir="$HEARTH_ROOT/build/$preset"
say "Packaging (preset $preset)"
rm -f "$dir"/hearth_*.deb
(cd "$dir" && cpack -G DEB >cpack.log 2>&1) || { tail -20 "$dir/cpack.log" >&2; die "cpack failed (log: $dir/cpack.log)"; }
deb=$(ls "$dir"/hearth_*_amd64.deb 2>/dev/null | head -1)
[ -n "$deb" ] || die "cpack made no hearth_*_amd64.deb in $dir"
say "Built $deb ($(du -h "$deb" | cut -f1))"
echo "$deb"
