#!/bin/bash
# One device call for issue 20: the same-run table of docs/benchmarks.md.
# llama.cpp (source vendored in the llama-cpp-python sdist, carried as
# .llama/llama.tgz: git-ignored, nothing of it committed; made by
# bench/gpu/make_llama_tarball.sh from the newest sdist) builds in the
# background at nice 19 from the first second; meanwhile Hearth builds, runs
# its kernel, backend, engine and model tests on the GPU, the attention
# micro-benchmark, an A/B of switches (AB: space-separated NAME=VALUE
# settings, each run against the default on the 8B and 135M files, twice,
# interleaved; default: the v15 GLU fusion on and every step timed), every Hearth row
# of the table and the per-op profile of a cold 512-token prompt (hearth-cli
# profile); once llama.cpp is built it runs
# on the very same files on an idle CPU, then Hearth's batch-1 decode once
# more (no build beside it).
# Last: the table with ratios and ceiling fractions (results.txt, table.txt).
# Run from the tree's root or a copy of it inside the checkout (PCRE2 in
# .deps/pcre2 or ../.deps/pcre2; the tarball in .llama/ or ../.llama/).
# LLAMA_WAIT: seconds into the call after which llama.cpp is no longer awaited.
cd "$(dirname "$0")/../.."
D=$PWD/.deps/pcre2
[ -d $D ] || D=$PWD/../.deps/pcre2
TGZ=$PWD/.llama/llama.tgz
[ -f $TGZ ] || TGZ=$PWD/../.llama/llama.tgz
export LLAMA_SOURCE_FILE=$(dirname $TGZ)/SOURCE # make_llama_tarball.sh: which sdist it came from
export PKG_CONFIG_SYSROOT_DIR=$D PKG_CONFIG_PATH=$D/usr/lib/x86_64-linux-gnu/pkgconfig
export LD_LIBRARY_PATH=$D/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/hearth-out}
W=/tmp/hw
L=/tmp/llama
B=/tmp/bgpu
M=/tmp/synth
mkdir -p $W $OUT $M
S=$OUT/summary.txt
R=$OUT/results.txt # key value lines for the table
: >"$S"
: >"$R"
t0=$(date +%s)
el() { echo $(($(date +%s) - t0)); }
note() { echo "$*" | tee -a "$S"; }
res() { echo "$1 $2" >>"$R"; }
rm -f /tmp/llama.done
if [ -f "$TGZ" ]; then
  mkdir -p $L && tar xzf "$TGZ" -C $L
  (
    cmake -S $L/llama.cpp -B $L/b -G Ninja -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAMA_BUILD_TESTS=OFF \
      -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_APP=OFF \
      -DLLAMA_CURL=OFF -DCMAKE_BUILD_TYPE=Release && nice -n 19 cmake --build $L/b --target llama-bench llama-batched-bench -j16
    echo "rc=$?" >/tmp/llama.done
  ) >$OUT/llama_build.log 2>&1 &
else
  note "no llama.cpp tarball: Hearth only"
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw --format=csv,noheader |
  tee -a $S
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEARTH_ENGINE_ONLY=ON -DHEARTH_CUDA_ARCHITECTURES=90 \
  >$W/cfg.log 2>&1 || { tail -30 $W/cfg.log; exit 1; }
cmake --build $B -j16 --target hearth-cli hearth-bench kernels_cuda_test kernels_cuda_bench models_llama_cuda_test \
  models_gemma3_cuda_test engine_runtime_cuda_test engine_backend_cuda_ops_test >$W/build.log 2>&1 || { grep -m5 -A12 -E "error|FAILED" $W/build.log; exit 1; }
note "hearth built at $(el) s"
CLI=$B/cli/hearth-cli
HB=$B/bench/engine/hearth-bench
(
  $CLI synth --shape llama-8b --quant Q4_0 -o $M/8b.gguf
  $CLI synth --shape smollm2-135m --quant Q4_1 -o $M/smol.gguf
  $CLI synth --shape llama-8b --quant Q4_K_M -o $M/8bk.gguf
) >$W/synth.log 2>&1 &
SYN=$!
timeout 240 $B/tests/kernels/cuda/kernels_cuda_test --gtest_brief=1 >$W/kernels_test.log 2>&1
note "kernels_cuda_test rc $? at $(el) s: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED TEST' $W/kernels_test.log | tr '\n' ' ')"
grep -E "Failure|Which is|error" $W/kernels_test.log | head -12 | tee -a $S
if grep -q "FAILED.*CudaPagedAttention" $W/kernels_test.log; then
  export HEARTH_CUDA_ATTN_WIDE=0
  note "attention tests failed: the rest runs the v12 kernels (HEARTH_CUDA_ATTN_WIDE=0)"
fi
for t in models/cuda/models_llama_cuda_test models/cuda/models_gemma3_cuda_test engine/runtime/engine_runtime_cuda_test \
  engine/backend/engine_backend_cuda_ops_test; do
  timeout 120 $B/tests/$t --gtest_brief=1 >$W/models_test.log 2>&1
  note "$(basename $t) rc $? at $(el) s: $(grep -E '^\[  PASSED|^\[  FAILED|FAILED TEST' $W/models_test.log | tr '\n' ' ')"
  cat $W/models_test.log >>$W/kernels_test.log
done
cp $W/kernels_test.log $OUT/
timeout 60 $B/tests/kernels/cuda/kernels_cuda_bench attn >$OUT/attn_bench.txt 2>&1
note "kernels_cuda_bench attn rc $? at $(el) s"
# The measured copy bandwidth (GB/s, read + write): the decode ceilings of the table.
res copy_gbs "$(sed -n 's/^copy d2d.* \([0-9.]*\) GB\/s.*/\1/p' $OUT/attn_bench.txt | head -1)"
cat $OUT/attn_bench.txt >>$S
wait $SYN
python3 -c "print('hello world ' * 341 + 'hel')" >$W/long.txt # 4,096 tokens (the synthetic tokenizer)
gen() { # KEY FILE ARGS... : hearth-cli generate, decode_tps -> results as KEY
  local k=$1 f=$2
  shift 2
  timeout 90 $CLI generate $f --device cuda --temp 0 --json "$@" 2>>$W/gen_err.log | tail -1 >$W/g.json
  local v
  v=$(python3 -c "import json, hashlib; j=json.load(open('$W/g.json')); print('%.1f %d %s' % (j['decode_tps'], j['prompt_tokens'], hashlib.md5(j['text'].encode()).hexdigest()[:10]))" 2>&1)
  note "$k: decode_tps prompt md5 = $v"
  res "$k" "${v%% *}"
}
# The A/B, interleaved: each setting of AB against the default.
AB=${AB:-HEARTH_CUDA_FUSE_GLU=1 HEARTH_CUDA_LAYER_TIMING=1}
for r in 1 2; do
  gen dec_8b_default_$r $M/8b.gguf --prompt "hello world" -n 128
  gen dec_smol_default_$r $M/smol.gguf --prompt "hello world" -n 128
  for a in $AB; do
    export "$a"
    gen dec_8b_${a}_$r $M/8b.gguf --prompt "hello world" -n 128
    gen dec_smol_${a}_$r $M/smol.gguf --prompt "hello world" -n 128
    unset "${a%%=*}"
  done
done
for r in 1 2; do gen ctx_wide_$r $M/8b.gguf --prompt-file $W/long.txt -n 64 --ctx 4352; done
gen dec_8b_wide $M/8b.gguf --prompt "hello world" -n 128
gen dec_smol_wide $M/smol.gguf --prompt "hello world" -n 128
gen dec_8bk_wide $M/8bk.gguf --prompt "hello world" -n 128
note "A/B done at $(el) s"
for f in 8b 8bk; do
  timeout 60 $HB prefill $M/$f.gguf --device cuda --tokens 512 --reps 3 --json >$W/pf_$f.json 2>>$W/hb_err.log
  v=$(python3 -c "import json; print('%.1f' % json.load(open('$W/pf_$f.json'))['prefill_tps'])" 2>&1)
  note "hearth prefill 512 $f: $v"
  res "pp_$f" "$v"
done
for n in 16 64; do
  timeout 90 $HB concurrent $M/8b.gguf --device cuda --streams $n --tokens 128 --json >$W/conc_$n.json 2>>$W/hb_err.log
  v=$(python3 -c "import json; j=json.load(open('$W/conc_$n.json')); print('%.1f %.1f' % (j['aggregate_decode_tps'], j['single_stream_decode_tps']))" 2>&1)
  note "hearth $n streams: aggregate single = $v"
  res "conc_$n" "${v%% *}"
done
python3 -c "print('hello world ' * 42 + 'hello wo', end='')" >$W/p512.txt # 512 tokens
timeout 60 $CLI profile $M/8b.gguf --device cuda --prompt "$(cat $W/p512.txt)" -n 1 >$W/profile512.txt 2>>$W/hb_err.log
note "hearth-cli profile, 8B Q4_0, a cold 512-token prompt, rc $?:"
head -40 $W/profile512.txt >>$S
cat $W/gen_err.log $W/hb_err.log >$OUT/hearth_err.log 2>/dev/null # at most 8 files come back
note "hearth rows done at $(el) s"
while [ ! -f /tmp/llama.done ] && [ "$(el)" -lt "${LLAMA_WAIT:-265}" ]; do sleep 2; done
note "llama.cpp build: $(cat /tmp/llama.done 2>/dev/null || echo 'not finished') at $(el) s"
LB=$L/b/bin
if [ -x $LB/llama-bench ]; then
  lb() { # KEY FILE ARGS...
    local k=$1 f=$2
    shift 2
    timeout 60 $LB/llama-bench -m $M/$f.gguf -ngl 99 -fa 1 -o jsonl "$@" >$W/lb_$k.jsonl 2>>$OUT/llama_run.log
    python3 - "$W/lb_$k.jsonl" "$k" "$R" <<'PY' | tee -a $S
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
with open(sys.argv[3], "a") as r:
    for j in rows:
        kind = "pp" if j["n_gen"] == 0 else "tg"
        key = "llama_%s_%s" % (kind, sys.argv[2])
        r.write("%s %.1f %.1f\n" % (key, j["avg_ts"], j["stddev_ts"]))
        print("%s: %.1f +/- %.1f (p %d n %d d %d)" % (key, j["avg_ts"], j["stddev_ts"], j["n_prompt"], j["n_gen"], j["n_depth"]))
PY
  }
  lb 8b 8b -p 512 -n 128 -r 3
  lb 8bk 8bk -p 512 -n 128 -r 3
  lb smol smol -p 512 -n 128 -r 3
  lb ctx 8b -p 0 -n 64 -d 4096 -r 2
  # Flash attention is spelt `-fa on` in newer common arguments and a bare `-fa` in older ones (the
  # llama-cpp-python 0.3.16 sources; `-fa 1` is refused there): the first spelling that runs.
  for fa in "-fa on" "-fa"; do
    timeout 90 $LB/llama-batched-bench -m $M/8b.gguf -ngl 99 $fa -c 20480 -npp 128 -ntg 128 -npl 16,64 \
      --output-format jsonl >$W/llama_batched.txt 2>>$OUT/llama_run.log
    grep -q '^{' $W/llama_batched.txt && break
  done
  python3 - "$W/llama_batched.txt" "$R" <<'PY' | tee -a $S
import json, sys
with open(sys.argv[2], "a") as r:
    for l in open(sys.argv[1]):
        if not l.startswith("{"): continue
        j = json.loads(l)
        r.write("llama_conc_%d %.1f\n" % (j["pl"], j["speed_tg"]))
        print("llama batched pl %d: S_TG %.1f S_PP %.1f" % (j["pl"], j["speed_tg"], j["speed_pp"]))
PY
  note "llama.cpp done at $(el) s"
  if [ "$(el)" -lt "${RERUN_BEFORE:-285}" ]; then # Hearth again, nothing building beside it
    gen dec_8b_idle $M/8b.gguf --prompt "hello world" -n 128
    gen dec_smol_idle $M/smol.gguf --prompt "hello world" -n 128
  fi
fi
python3 - "$R" <<'PY' | tee $OUT/table.txt
import sys
v = {}
for l in open(sys.argv[1]):
    p = l.split()
    if len(p) >= 2:
        try: v[p[0]] = [float(x) for x in p[1:]]
        except ValueError: pass
def g(k):
    return v[k][0] if k in v else None
def mean(*ks):
    xs = [g(k) for k in ks if g(k) is not None]
    return sum(xs) / len(xs) if xs else None
# Decode ceilings: bytes read per token (docs/perf-notes.md: the 8B Q4_0
# weights 4.22 GB, Q4_K_M 4.62 GB, + 0.54 GB of f16 KV at 4,096 tokens) at the
# copy bandwidth measured in this call (the H200's 4,250 GB/s if missing).
copy = (g("copy_gbs") or 4250.0) * 1e9
ceil = lambda gb: int(round(copy / (gb * 1e9)))
rows = [
    ("8B Q4_0 decode, batch 1", g("dec_8b_wide"), "llama_tg_8b", ceil(4.22)),
    ("8B Q4_K_M decode, batch 1", g("dec_8bk_wide"), "llama_tg_8bk", ceil(4.62)),
    ("SmolLM2-135M shape Q4_1 decode", g("dec_smol_wide"), "llama_tg_smol", None),
    ("8B Q4_0 decode at 4,096 tokens of context", mean("ctx_wide_1", "ctx_wide_2"), "llama_tg_ctx", ceil(4.76)),
    ("8B Q4_0 prompt 512", g("pp_8b"), "llama_pp_8b", None),
    ("8B Q4_K_M prompt 512", g("pp_8bk"), "llama_pp_8bk", None),
    ("8B Q4_0, 16 sequences (aggregate decode)", g("conc_16"), "llama_conc_16", None),
    ("8B Q4_0, 64 sequences (aggregate decode)", g("conc_64"), "llama_conc_64", None),
]
import os
sf = os.environ.get("LLAMA_SOURCE_FILE", "")
src = open(sf).read().strip() if os.path.exists(sf) else "unknown (no SOURCE beside the tarball)"
print("llama.cpp: " + src)
print("| workload | Hearth tok/s | llama.cpp tok/s | Hearth / llama.cpp | Hearth's share of the ceiling |")
print("|---|---|---|---|---|")
f = lambda x: "n/a" if x is None else "{:,.1f}".format(x)
for name, h, lk, ceil in rows:
    l = v.get(lk)
    ls = "n/a" if l is None else ("{:,.1f}".format(l[0]) + (" +/- {:,.1f}".format(l[1]) if len(l) > 1 else ""))
    ratio = "n/a" if h is None or l is None or l[0] == 0 else "%.2f" % (h / l[0])
    share = "%d%% (%s)" % (round(100 * h / ceil), "{:,}".format(ceil)) if h and ceil else ("launch-bound" if "135M" in name else "")
    print("| %s | %s | %s | %s | %s |" % (name, f(h), ls, ratio, share))
print()
print("A/B, decode tok/s (runs 1 / 2):")
for k in sorted(k for k in v if k.startswith("dec_8b_") and k.endswith("_1")):
    base = k[len("dec_8b_"):-2]
    print("  %s: 8B %s / %s, 135M %s / %s" % (base, f(g(k)), f(g("dec_8b_%s_2" % base)), f(g("dec_smol_%s_1" % base)), f(g("dec_smol_%s_2" % base))))
print("4,096 context: %s / %s; idle-CPU rerun 8B %s, 135M %s" % (f(g("ctx_wide_1")), f(g("ctx_wide_2")), f(g("dec_8b_idle")), f(g("dec_smol_idle"))))
PY
note "all done at $(el) s"
