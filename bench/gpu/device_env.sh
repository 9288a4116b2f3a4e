# Sourced by the device-call scripts from the tree's root: PCRE2 unpacked in
# .deps/pcre2 (see merged_check.sh) on the compiler's and the loader's paths,
# $OUT (the folder the device tool brings back) created, and el() printing
# the seconds since the script started before its arguments.
D=$PWD/.deps/pcre2
export PKG_CONFIG_SYSROOT_DIR=$D PKG_CONFIG_PATH=$D/usr/lib/x86_64-linux-gnu/pkgconfig
export LD_LIBRARY_PATH=$D/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/hearth-out}
mkdir -p "$OUT"
t0=$(date +%s)
el() { echo "[$(($(date +%s) - t0)) s] $*"; }
