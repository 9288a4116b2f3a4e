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
# The build, the synthetic models and scratch files of the device scripts
# (kept between calls on the same warm machine), and note(): el() into
# $OUT/summary.txt as well.
B=/tmp/bgpu
M=/tmp/synth
W=/tmp/hw
mkdir -p $B $M $W
S=$OUT/summary.txt
note() { el "$*" | tee -a "$S"; }

# llama.cpp from .llama/llama.tgz (the llama-cpp-python sdist's vendor/llama.cpp,
# git-ignored) built for sm_90 in /tmp/llama/b at nice 19 in a session of its
# own, so it outlives the call: a later call on the same warm machine finds it
# built (/tmp/llama.done holds the build's exit status). Arguments: the targets.
start_llama_build() {
  local L=/tmp/llama
  [ -f .llama/llama.tgz ] && [ ! -d $L/llama.cpp ] || return 0
  mkdir -p $L && tar xzf .llama/llama.tgz -C $L
  setsid nohup bash -c "cmake -S $L/llama.cpp -B $L/b -G Ninja -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_OPENSSL=OFF \
    -DLLAMA_BUILD_APP=OFF -DLLAMA_CURL=OFF -DCMAKE_BUILD_TYPE=Release >$L/cfg.log 2>&1 &&
    nice -n 19 cmake --build $L/b --target $* -j12 >$L/build.log 2>&1;
    echo rc=\$? >/tmp/llama.done" >/dev/null 2>&1 &
  echo "llama.cpp build started in the background"
}
