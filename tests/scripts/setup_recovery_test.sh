#!/usr/bin/env bash
# The set-up heals a build folder that a failed or foreign configure left
# behind: a lone stale CMakeCache.txt, or a cache from another source tree,
# is configured again and builds; a usable folder is not configured again.
# Builds one small target (the compressed man pages) in a folder of its own.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HEARTH_BUILD_DIR="$work/build"
fails=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fails=$((fails + 1)); fi; }
run() { (configure_and_build dev hearth_docs) >"$work/out.txt" 2>&1; echo $? >"$work/rc"; }

# 1. What a configure that failed half-way leaves: a cache and nothing else.
mkdir -p "$HEARTH_BUILD_DIR"
printf 'CMAKE_HOME_DIRECTORY:INTERNAL=%s\nCMAKE_GENERATOR:INTERNAL=Ninja\n' "$HEARTH_ROOT" >"$HEARTH_BUILD_DIR/CMakeCache.txt"
run
check "a lone stale cache is configured again" 'grep -q "the last configure did not finish" "$work/out.txt"'
check "and builds" '[ "$(cat "$work/rc")" = 0 ] && [ -f "$HEARTH_BUILD_DIR/build.ninja" ] && [ -f "$HEARTH_BUILD_DIR/packaging/hearth.1.gz" ]'

# 2. A usable folder: built again without configuring.
run
check "a usable folder is not configured again" '! grep -q "Configuring" "$work/out.txt" && [ "$(cat "$work/rc")" = 0 ]'

# 3. A cache from another source tree (a copied build folder).
sed -i "s|^CMAKE_HOME_DIRECTORY:INTERNAL=.*|CMAKE_HOME_DIRECTORY:INTERNAL=/elsewhere/hearth|" "$HEARTH_BUILD_DIR/CMakeCache.txt"
run
check "a foreign cache is noticed" 'grep -q "belongs to another source tree (/elsewhere/hearth)" "$work/out.txt"'
check "and the folder builds again" '[ "$(cat "$work/rc")" = 0 ] && grep -q "^CMAKE_HOME_DIRECTORY:INTERNAL=$HEARTH_ROOT\$" "$HEARTH_BUILD_DIR/CMakeCache.txt"'

# 4. A configure that fails says so and names its log.
( cd "$work" && HEARTH_ROOT="$work" configure_and_build dev ) >"$work/out.txt" 2>&1
check "a failing configure names the cause's log" 'grep -q "cmake configure failed (full log: .*configure.log)" "$work/out.txt"'

[ "$fails" = 0 ] && echo "setup recovery: 6 passed, 0 failed" || { cat "$work/out.txt"; echo "setup recovery: $((6 - fails)) passed, $fails failed"; exit 1; }
