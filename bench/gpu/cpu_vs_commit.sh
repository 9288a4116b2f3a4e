#!/bin/bash
# "No CPU speed lost": this tree's CPU decode and prefill against another
# commit's, on the device machine's idle cores (the 2 shared cores of the
# development machine are too noisy for a few-percent question).
# Usage (from the repository root on the device): bash bench/gpu/cpu_vs_commit.sh OLD_TREE
#   OLD_TREE: the other commit's sources (`git archive COMMIT | tar -x -C .wt-old`,
#   carried with the call). Needs .deps/pcre2 as merged_check.sh does.
# Both trees build hearth-cli with the engine-only `gpu` preset (Release); both
# run the same synthetic files (written by the older tree's `hearth-cli synth`, which both read) with
# the same prompt, threads and greedy settings, interleaved, 3 measured reps each after a warm-up.
set -uo pipefail
OLD=$(realpath "$1")
NEW=$PWD
OUT=${OUT:-/tmp/hearth-out}
mkdir -p "$OUT"
D=$NEW/.deps/pcre2
export PKG_CONFIG_SYSROOT_DIR=$D PKG_CONFIG_PATH=$D/usr/lib/x86_64-linux-gnu/pkgconfig
export LD_LIBRARY_PATH=$D/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
for t in "$OLD" "$NEW"; do
  (cd "$t" && cmake --preset gpu >"$OUT/cfg-$(basename "$t").log" 2>&1 &&
    cmake --build build/gpu -j16 --target hearth-cli >"$OUT/build-$(basename "$t").log" 2>&1) ||
    { echo "build of $t failed"; tail -20 "$OUT/build-$(basename "$t").log"; exit 1; }
done
CLI_NEW=$NEW/build/gpu/cli/hearth-cli CLI_OLD=$OLD/build/gpu/cli/hearth-cli
$CLI_OLD synth --shape smollm2-135m --quant Q4_1 -o /tmp/s135.gguf >/dev/null
$CLI_OLD synth --shape llama-1b --quant Q4_0 -o /tmp/l1b.gguf >/dev/null
python3 - "$CLI_OLD" "$CLI_NEW" "$OUT" <<'PY'
import json, os, statistics, subprocess, sys
old, new, out = sys.argv[1:4]
prompt = os.path.join(out, "prompt.txt")
open(prompt, "w").write(" ".join(["the quick brown fox jumps over the lazy dog"] * 20))
def run(cli, model, threads):
    r = subprocess.run([cli, "generate", model, "--prompt-file", prompt, "--temp", "0", "-n", "128",
                        "--threads", str(threads), "--device", "cpu", "--json"], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise SystemExit(f"{cli} failed: {r.stderr[-400:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])
rows = []
for model in ["/tmp/s135.gguf", "/tmp/l1b.gguf"]:
    for threads in [4, 8]:
        res = {"old": [], "new": []}
        for rep in range(4):
            order = ["old", "new"] if rep % 2 == 0 else ["new", "old"]
            for who in order:
                j = run(old if who == "old" else new, model, threads)
                if rep > 0:  # rep 0 warms the page cache and the CPU clocks
                    res[who].append(j)
        med = lambda who, k: statistics.median(x[k] for x in res[who])
        same = all(a["generated_token_ids"] == b["generated_token_ids"] for a, b in zip(res["old"], res["new"]))
        row = {"model": os.path.basename(model), "threads": threads,
               "prompt_tokens": res["new"][0]["prompt_tokens"],
               "decode_old": med("old", "decode_tps"), "decode_new": med("new", "decode_tps"),
               "prefill_old": med("old", "prefill_tps"), "prefill_new": med("new", "prefill_tps"),
               "same_tokens": same}
        row["decode_ratio"] = row["decode_new"] / row["decode_old"]
        row["prefill_ratio"] = row["prefill_new"] / row["prefill_old"]
        rows.append(row)
        print("%-10s t=%d prompt=%d decode old %.1f new %.1f (x%.3f)  prefill old %.1f new %.1f (x%.3f)  same tokens: %s" % (
            row["model"], threads, row["prompt_tokens"], row["decode_old"], row["decode_new"], row["decode_ratio"],
            row["prefill_old"], row["prefill_new"], row["prefill_ratio"], same), flush=True)
json.dump(rows, open(os.path.join(out, "cpu_vs_commit.json"), "w"), indent=1)
PY
