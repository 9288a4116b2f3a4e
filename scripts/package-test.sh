#!/usr/bin/env bash
# The packaging test (ctest label `package`): builds the CPU-only .deb, checks
# it with lintian, desktop-file-validate and appstreamcli, installs it with apt,
# runs the installed programs outside the source tree (--version, a generation
# on the default model, the app's window under Xvfb), removes it together with
# the dependencies apt brought in for it, and checks that /usr holds exactly the
# files it held before.
# Needs root (or sudo without a password): exits 77 (skipped) otherwise.
# Usage: scripts/package-test.sh [PRESET]   (default package-cpu)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
preset=${1:-package-cpu}
fail() { printf 'package test: FAIL: %s\n' "$*" >&2; exit 1; }

if [ "$(id -u)" -ne 0 ] && ! sudo -n true 2>/dev/null; then
  echo "package test: skipped (installing a package needs root or password-less sudo)"; exit 77
fi
# One package test at a time on a machine (two checkouts testing at once would
# install and remove each other's package): wait for the other one to finish.
lock=/var/lock/hearth-package-test.lock
exec 9>"$lock"
flock -w 3000 9 || fail "another package test holds $lock"
if dpkg-query -W -f='${Status}' hearth 2>/dev/null | grep -q 'install ok installed'; then
  echo "package test: skipped (a hearth package is already installed on this machine; remove it first)"; exit 77
fi

deb=$("$HEARTH_ROOT/scripts/package.sh" "$preset" | tail -1)
[ -f "$deb" ] || fail "scripts/package.sh did not produce a .deb"
work=$(mktemp -d)
installed=0
packages() { dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' | awk '$1 == "ii" {print $2}' | LC_ALL=C sort; }
# Removes hearth and whatever apt installed with it (packages absent before the install).
uninstall() {
  as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 remove --purge -y -qq hearth >"$work/apt.log" 2>&1 || return 1
  local added
  added=$(LC_ALL=C comm -13 "$work/packages.before" <(packages) | tr '\n' ' ')
  if [ -n "$added" ]; then
    say "Purging what apt installed for the package: $added"
    # shellcheck disable=SC2086
    as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 purge -y -qq $added >>"$work/apt.log" 2>&1 || return 1
  fi
}
cleanup() {
  if [ "$installed" = 1 ]; then uninstall || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

say "lintian $(basename "$deb")"
lintian --fail-on error --tag-display-limit 0 "$deb" | tee "$work/lintian.txt" || fail "lintian reports errors"

say "Validating the desktop entry and the AppStream metadata inside the package"
dpkg-deb -x "$deb" "$work/root"
desktop-file-validate "$work/root/usr/share/applications/hearth.desktop" || fail "desktop-file-validate"
appstreamcli validate --no-net "$work/root/usr/share/metainfo/io.github.hearth.Hearth.metainfo.xml" || fail "appstreamcli"
for f in usr/bin/hearth usr/bin/hearth-cli usr/bin/hearth-fetch-model usr/bin/hearth-server \
  usr/share/hearth/catalog.json usr/share/man/man1/hearth.1.gz usr/share/man/man1/hearth-cli.1.gz \
  usr/share/man/man1/hearth-server.1.gz usr/share/mime/packages/hearth.xml \
  usr/share/icons/hicolor/scalable/apps/hearth.svg usr/share/icons/hicolor/48x48/apps/hearth.png; do
  [ -e "$work/root/$f" ] || fail "the package lacks /$f"
done
man -l "$work/root/usr/share/man/man1/hearth-cli.1.gz" 2>/dev/null | grep -q "generate" || fail "hearth-cli(1) does not render"
man -l "$work/root/usr/share/man/man1/hearth-server.1.gz" 2>/dev/null | grep -q "chat/completions" \
  || fail "hearth-server(1) does not render"

say "Installing the package"
find /usr -xdev -print 2>/dev/null | LC_ALL=C sort >"$work/usr.before"
packages >"$work/packages.before"
installed=1
as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "$deb" >"$work/apt.log" 2>&1 \
  || { cat "$work/apt.log" >&2; fail "apt-get install $deb"; }

# Everything below runs outside the source tree, with a home of its own; the
# models folder stays the one the set-up installed the default model into.
models=$(python3 "$HEARTH_ROOT/scripts/fetch_model.py" --print-default-name)
HEARTH_MODELS_DIR=$(cd "$HEARTH_ROOT/scripts" && python3 -c 'import fetch_model; print(fetch_model.models_dir())')
export HEARTH_MODELS_DIR
cd "$work"
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" XDG_DATA_HOME="$work/home/.local/share"
mkdir -p "$HOME"

version=$(sed -n 's/^project(hearth VERSION \([0-9.]*\).*/\1/p' "$HEARTH_ROOT/CMakeLists.txt")
[ "$(/usr/bin/hearth --version)" = "hearth $version" ] || fail "/usr/bin/hearth --version says '$(/usr/bin/hearth --version)'"
/usr/bin/hearth-cli --version | grep -q "$version" || fail "/usr/bin/hearth-cli --version"
[ "$(/usr/bin/hearth-server --version)" = "hearth-server $version" ] || fail "/usr/bin/hearth-server --version"
[ "$(/usr/bin/hearth-fetch-model --print-default-name)" = "$models" ] || fail "hearth-fetch-model does not find the installed catalog"

say "hearth-cli generate on the default model (models folder $HEARTH_MODELS_DIR)"
/usr/bin/hearth-cli generate "$models" --prompt "The capital of France is" -n 8 --temp 0 --json >"$work/gen.txt" \
  || fail "/usr/bin/hearth-cli generate failed"
tail -1 "$work/gen.txt" | python3 -c 'import json,sys; r=json.load(sys.stdin); assert r["generated_tokens"] == 8, r' \
  || fail "the generation did not produce 8 tokens"
# Without the model: the error says how to get it.
HEARTH_MODELS_DIR="$work/empty" /usr/bin/hearth-cli generate "$models" --prompt hi -n 1 2>"$work/err.txt" && fail "generate without a model succeeded"
grep -q "hearth-fetch-model $models" "$work/err.txt" || fail "the missing-model error does not say how to install it: $(cat "$work/err.txt")"

say "Starting /usr/bin/hearth under Xvfb"
xvfb-run -a -s "-screen 0 1280x800x24" bash -c '
  /usr/bin/hearth --no-load --database "$HOME/test.db" &
  app=$!
  for _ in $(seq 1 150); do   # up to 30 s for the window to map
    if xwininfo -root -tree 2>/dev/null | grep -q "\"Hearth\""; then kill $app; wait $app 2>/dev/null; exit 0; fi
    kill -0 $app 2>/dev/null || exit 2
    sleep 0.2
  done
  kill $app; exit 1' || fail "the installed app showed no window named Hearth"

say "Removing the package"
cd /
uninstall || { cat "$work/apt.log" >&2; fail "removing hearth and its dependencies"; }
installed=0
find /usr -xdev -print 2>/dev/null | LC_ALL=C sort >"$work/usr.after"
if ! diff "$work/usr.before" "$work/usr.after" >"$work/usr.diff"; then
  cat "$work/usr.diff" >&2
  fail "removing the package left /usr different from before"
fi
echo "package test: passed ($(basename "$deb"), $(grep -c . "$work/lintian.txt" || true) lintian notes, no errors)"
