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

# Waits for start_llama_build (up to LLAMA_WAIT seconds since the script
# started, default 480), then runs llama-batched-bench at 16 and 64
# sequences (prompt 128, 128 generated, flash attention) on the file $1 and
# notes S_TG of each. Returns 1 where llama.cpp is not built.
llama_batched() {
  while [ ! -f /tmp/llama.done ] && [ $(($(date +%s) - t0)) -lt ${LLAMA_WAIT:-480} ]; do sleep 2; done
  note "llama.cpp: $(cat /tmp/llama.done 2>/dev/null || echo not built)"
  [ -x /tmp/llama/b/bin/llama-batched-bench ] || return 1
  local fa
  for fa in "-fa on" "-fa"; do
    timeout 90 /tmp/llama/b/bin/llama-batched-bench -m "$1" -ngl 99 $fa -c 20480 -npp 128 -ntg 128 -npl 16,64 \
      --output-format jsonl >$W/lb.txt 2>>$W/err.log
    grep -q '^{' $W/lb.txt && break
  done
  python3 -c "
import json
for l in open('$W/lb.txt'):
    if l.startswith('{'):
        j = json.loads(l); print('llama batched pl %d: S_TG %.1f' % (j['pl'], j['speed_tg']))" | tee -a "$S"
}
# The engine-only build (sm_90) in $B with the targets given ($CLI: its
# hearth-cli); on failure its first errors are printed and it returns 1.
build_engine() {
  cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEARTH_ENGINE_ONLY=ON -DHEARTH_CUDA_ARCHITECTURES=90 \
    >$W/cfg.log 2>&1 || { tail -30 $W/cfg.log; return 1; }
  cmake --build $B -j16 --target "$@" >$W/build.log 2>&1 || { grep -m5 -A12 -E "error|FAILED" $W/build.log; return 1; }
  note "built"
}
CLI=$B/cli/hearth-cli
# A test binary under $B/tests (path, then its arguments), its verdict noted,
# its failures printed and its log appended to $OUT/tests.log. Runs under
# the environment it is given (VAR=1 run_gtest ...).
run_gtest() {
  local t=$1
  shift
  timeout 200 $B/tests/$t --gtest_brief=1 "$@" >$W/gtest.log 2>&1
  note "$(basename $t) $* rc $?: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED TEST' $W/gtest.log | tr '\n' ' ')"
  grep -E "Failure|Which is|error|Expected" $W/gtest.log | head -8 | tee -a "$S"
  cat $W/gtest.log >>$OUT/tests.log
}
# The 8B Q4_0 synthetic file's greedy decode tok/s under a label (hearth-cli
# generate --json; ARGS: the prompt and lengths), noted. Needs $M/8b.gguf.
gen() { # LABEL ARGS...
  local k=$1 v
  shift
  v=$(timeout 90 $CLI generate $M/8b.gguf --device cuda --temp 0 --json "$@" 2>>$W/err.log | tail -1 |
    python3 -c "import json,sys; j=json.load(sys.stdin); print('%.1f' % j['decode_tps'])" 2>&1)
  note "8B Q4_0 $k: decode $v tok/s"
}
