#!/usr/bin/env bash
# Tries the README's test command on a truly fresh machine: a clean Debian 12
# root made with debootstrap (minbase: no compiler, no Python, no CUDA
# toolkit: the CPU-only user's machine too), with a clean clone of this
# repository's committed HEAD in it. Nothing is installed there by hand: the
# set-up must do it all. Too slow for CI (about an hour on 2 cores); run it
# whenever the set-up changes.
#
# Usage: scripts/check-fresh.sh [--keep] [ROOTDIR]   (default /var/tmp/hearth-fresh)
# Environment: HEARTH_FRESH_TEST="scripts/test.sh" (the command run inside),
#   HEARTH_SKIP_SANITIZERS (default 1) and HEARTH_FUZZ_SECONDS (default 10)
#   are passed in. The site's network settings (DNS, the CA bundle that HTTPS
#   to PyPI is verified with, pip's configuration) are copied in: they belong
#   to the site, not to Hearth. The log is ROOTDIR.log.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
keep=0
[ "${1:-}" = --keep ] && { keep=1; shift; }
root=${1:-/var/tmp/hearth-fresh}
mirror=$(sed -n 's/^URIs: *\(http[^ ]*debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
mirror=${mirror:-http://deb.debian.org/debian}
[ "$(id -u)" -eq 0 ] || die "check-fresh needs root (debootstrap, chroot, mounts)"

if ! command -v debootstrap >/dev/null; then
  say "Installing debootstrap"
  env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null \
    || die "could not install debootstrap"
fi

unmount_all() {
  for m in dev/pts dev proc sys; do mountpoint -q "$root/$m" && umount -l "$root/$m" || true; done
}
cleanup() { unmount_all; [ "$keep" = 1 ] || rm -rf "$root"; }
trap cleanup EXIT
unmount_all
rm -rf "$root"

say "Making a fresh Debian 12 root in $root (debootstrap --variant=minbase bookworm $mirror)"
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.log" 2>&1 || die "debootstrap failed (log: $root.log)"
cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/" 2>/dev/null || true
cp /etc/resolv.conf "$root/etc/resolv.conf"
mkdir -p "$root/etc/ssl/certs" "$root/usr/local/share/ca-certificates"
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/" 2>/dev/null || true
[ -f /etc/pip.conf ] && cp /etc/pip.conf "$root/etc/pip.conf"
mount -t proc proc "$root/proc"
mount -t sysfs sys "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"

say "Cloning $(git -C "$HEARTH_ROOT" rev-parse --short HEAD) into the fresh root"
# Not under /root (mode 0700): the read-only database checks run hearth-cli as
# nobody, who must reach the build (as in a user's clone under a 0755 /home).
git clone -q "$HEARTH_ROOT" "$root/srv/hearth" || die "git clone failed"
[ -z "$(git -C "$HEARTH_ROOT" status --porcelain --untracked-files=no)" ] \
  || say "Note: uncommitted changes are not in the clone: it tests HEAD"

cmd=${HEARTH_FRESH_TEST:-scripts/test.sh}
say "Running '$cmd' in the fresh root (log: $root.log)"
start=$(date +%s)
set +e
chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  LANG=C.UTF-8 CI=true HEARTH_SKIP_SANITIZERS="${HEARTH_SKIP_SANITIZERS:-1}" \
  HEARTH_FUZZ_SECONDS="${HEARTH_FUZZ_SECONDS:-10}" \
  SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
  REQUESTS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt \
  /bin/bash -c "cd /srv/hearth && $cmd" >>"$root.log" 2>&1
rc=$?
set -e
mins=$(( ($(date +%s) - start) / 60 ))
tail -25 "$root.log"
[ $rc -eq 0 ] || die "the test command failed on the fresh machine after $mins min (exit $rc; log: $root.log)"
say "check-fresh: passed in $mins min on a fresh Debian 12 root (log: $root.log)"
