#!/bin/bash
# "No CPU speed lost": this tree's CPU decode and prefill against other
# commits', on the device machine's idle cores (the 2 shared cores of the
# development machine are too noisy for a few-percent question).
# Usage (from the repository root on the device): bash bench/gpu/cpu_vs_commit.sh OLD_TREE...
#   OLD_TREE: another commit's sources (`git archive COMMIT | tar -x -C .wt-old`,
#   carried with the call). Needs .deps/pcre2 as merged_check.sh does.
#   HEARTH_CPU_ONLY=1 builds every tree without CUDA (faster; the CPU path alone), and then
#   also this tree with CUDA, so the two builds of the same code are compared too.
# Every tree builds hearth-cli with the engine-only `gpu` preset (Release); all run the same
# synthetic files (written by the first old tree's `hearth-cli synth`, which all read) with the
# same prompt, threads and greedy settings, interleaved, 3 measured reps each after a warm-up.
set -uo pipefail
NEW=$PWD
OUT=${OUT:-/tmp/hearth-out}
mkdir -p "$OUT"
D=$NEW/.deps/pcre2
export PKG_CONFIG_SYSROOT_DIR=$D PKG_CONFIG_PATH=$D/usr/lib/x86_64-linux-gnu/pkgconfig
export LD_LIBRARY_PATH=$D/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
TREES=()
for t in "$@"; do TREES+=("$(realpath "$t")"); done
TREES+=("$NEW")
EXTRA=()
[ "${HEARTH_CPU_ONLY:-0}" = 1 ] && EXTRA=(-DHEARTH_CUDA=OFF)
build() {  # tree build-dir [cmake args]
  local t=$1 b=$2 name
  name=$(basename "$t")-$(basename "$b")
  shift 2
  # Logs stay in /tmp (only 8 files come back from $OUT: the JSON must be one of them).
  (cd "$t" && cmake --preset gpu -B "$b" "$@" >"/tmp/cfg-$name.log" 2>&1 &&
    cmake --build "$b" -j16 --target hearth-cli >"/tmp/build-$name.log" 2>&1) ||
    { echo "build of $t ($b) failed"; tail -20 "/tmp/cfg-$name.log" "/tmp/build-$name.log"; return 1; }
}
CLIS=()
for t in "${TREES[@]}"; do
  build "$t" build/cpuc "${EXTRA[@]}" || exit 1
  CLIS+=("$t/build/cpuc/cli/hearth-cli")
done
if [ "${HEARTH_CPU_ONLY:-0}" = 1 ]; then
  build "$NEW" build/cpuc-cuda || exit 1
  CLIS+=("$NEW/build/cpuc-cuda/cli/hearth-cli")
fi
"${CLIS[0]}" synth --shape smollm2-135m --quant Q4_1 -o /tmp/s135.gguf >/dev/null
"${CLIS[0]}" synth --shape llama-1b --quant Q4_0 -o /tmp/l1b.gguf >/dev/null
python3 - "$OUT" "${CLIS[@]}" <<'PY'
import json, os, statistics, subprocess, sys
out, clis = sys.argv[1], sys.argv[2:]
names = [os.path.relpath(c, os.getcwd()).replace("/cli/hearth-cli", "") for c in clis]
prompt = os.path.join(out, "prompt.txt")
open(prompt, "w").write(" ".join(["the quick brown fox jumps over the lazy dog"] * 20))
def run(cli, model, threads):
    r = subprocess.run([cli, "generate", model, "--prompt-file", prompt, "--temp", "0", "-n", "128",
                        "--threads", str(threads), "--device", "cpu", "--json"], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise SystemExit(f"{cli} failed: {r.stderr[-400:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])
rows = []
for model, threads in [("/tmp/s135.gguf", 4), ("/tmp/s135.gguf", 8), ("/tmp/l1b.gguf", 8)]:
    res = [[] for _ in clis]
    for rep in range(4):
        order = list(range(len(clis))) if rep % 2 == 0 else list(reversed(range(len(clis))))
        for i in order:
            j = run(clis[i], model, threads)
            if rep > 0:  # rep 0 warms the page cache and the CPU clocks
                res[i].append(j)
    base = statistics.median(x["decode_tps"] for x in res[-1])
    for i, name in enumerate(names):
        dec = statistics.median(x["decode_tps"] for x in res[i])
        pre = statistics.median(x["prefill_tps"] for x in res[i])
        same = all(a["generated_token_ids"] == b["generated_token_ids"] for a, b in zip(res[i], res[-1]))
        row = {"tree": name, "model": os.path.basename(model), "threads": threads, "decode_tps": dec,
               "prefill_tps": pre, "decode_vs_last": dec / base, "same_tokens_as_last": same,
               "decode_all": [x["decode_tps"] for x in res[i]]}
        rows.append(row)
        print("%-10s t=%d %-28s decode %7.1f (x%.3f of the last)  prefill %8.1f  same tokens: %s  all: %s" % (
            row["model"], threads, name, dec, row["decode_vs_last"], pre, same,
            " ".join("%.1f" % v for v in row["decode_all"])), flush=True)
json.dump(rows, open(os.path.join(out, "cpu_vs_commit.json"), "w"), indent=1)
PY
