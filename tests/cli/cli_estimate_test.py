#!/usr/bin/env python3
"""hearth-cli estimate against what the engine then allocates (issue 16).

For a synthetic model, at several contexts: `estimate --json` on the CPU must
give exactly the weights and KV bytes that `generate --json` reports after
loading a prompt longer than one engine step (`memory`), and a total within
5% of it (the workspace is planned for a full step). A context far beyond the free
memory must say `fits: false` with a shorter context that fits among the
suggestions, and that suggestion must itself fit. `--explain` says why.
Errors (an unknown model, a bad --kv) are clear and non-zero.

Usage: cli_estimate_test.py HEARTH_CLI
"""
import json
import os
import subprocess
import sys
import tempfile

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(cli, *args):
    return subprocess.run([cli, *args], capture_output=True, text=True, timeout=300)


def last_json(proc, what):
    if proc.returncode != 0:
        failures.append(f"{what}: rc={proc.returncode} stderr={proc.stderr[-400:]}")
        print("FAIL:", failures[-1])
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    cli = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "m.gguf")
        synth = run(cli, "synth", "--shape", "smollm2-135m", "--quant", "Q4_0", "--layers", "6", "--vocab", "4000",
                    "-o", model)
        if synth.returncode != 0:
            print("synth failed:", synth.stderr)
            return 1
        for ctx in ["512", "2048", "0"]:
            est = last_json(run(cli, "estimate", model, "--device", "cpu", "--ctx", ctx, "--json"), f"estimate ctx {ctx}")
            # A prompt longer than one step (256 tokens), so the engine allocates a full step's workspace.
            gen = last_json(run(cli, "generate", model, "--device", "cpu", "--ctx", ctx, "--prompt", "hello there " * 30,
                                "-n", "4", "--temp", "0", "--json"), f"generate ctx {ctx}")
            if est is None or gen is None:
                continue
            mem = gen["memory"]
            for field in ["weights_bytes", "kv_bytes", "kv_bytes_per_token", "workspace_bytes", "total_bytes",
                          "free_bytes", "fits", "suggestions"]:
                check(field in est, f"ctx {ctx}: estimate has {field}")
            check(est["weights_bytes"] == mem["weights_bytes"],
                  f"ctx {ctx}: weights {est['weights_bytes']} == {mem['weights_bytes']}")
            check(est["kv_bytes"] == mem["kv_bytes"], f"ctx {ctx}: kv {est['kv_bytes']} == {mem['kv_bytes']}")
            ratio = est["total_bytes"] / mem["total_bytes"]
            print(f"ctx {ctx}: estimated {est['total_bytes']} bytes, allocated {mem['total_bytes']} ({ratio:.4f})")
            check(0.95 <= ratio <= 1.05, f"ctx {ctx}: total within 5% ({ratio:.4f})")
            check(est["kv_bytes"] == est["kv_bytes_per_token"] * est["kv_blocks"] * 16,
                  f"ctx {ctx}: kv bytes = per token x blocks x 16")
            check(est["fits"] is True and est["suggestions"] == [], f"ctx {ctx}: a small model fits, no suggestions")
        # Far past the free memory: the verdict and a shorter context that fits.
        big = last_json(run(cli, "estimate", model, "--device", "cpu", "--ctx", "50000000", "--json"), "huge context")
        if big is not None:
            check(big["fits"] is False, "a 50M-token context does not fit")
            ctx_hints = [s for s in big["suggestions"] if s["option"].startswith("--ctx ")]
            check(len(ctx_hints) == 1, f"one shorter-context suggestion: {big['suggestions']}")
            if ctx_hints:
                check(ctx_hints[0]["total_bytes"] <= ctx_hints[0]["free_bytes"], "the suggestion fits")
                n = ctx_hints[0]["option"].split()[1]
                again = last_json(run(cli, "estimate", model, "--device", "cpu", "--ctx", n, "--json"), "suggested ctx")
                check(again is not None and again["fits"] is True, "estimate with the suggested context fits")
        why = run(cli, "estimate", model, "--device", "cpu", "--explain")
        check(why.returncode == 0 and "why: context" in why.stdout and "why: device cpu" in why.stdout,
              f"--explain says why: {why.stdout[-300:]}")
        check("recommended for this machine: --device" in why.stdout and "because: device" in why.stdout,
              f"--explain says what it recommends and why: {why.stdout[-400:]}")
        # The recommendation (models/recommend.h): a device, a context and a KV precision that fit here.
        rec = last_json(run(cli, "estimate", model, "--explain", "--json"), "recommendation")
        if rec is not None:
            r = rec.get("recommended", {})
            for field in ("device", "device_name", "context_length", "kv_precision", "max_sequences",
                          "max_batch_tokens", "total_bytes", "free_bytes", "fits", "decode_tokens_per_s", "reasons"):
                check(field in r, f"recommended has {field}")
            if r:
                check(r["fits"] is True and r["total_bytes"] <= r["free_bytes"], f"a small model fits: {r}")
                check(r["kv_precision"] in ("f16", "q8_0", "fp8"), f"a KV precision: {r['kv_precision']}")
                check(2048 <= r["context_length"] <= 32768, f"a context in range: {r['context_length']}")
                check(len(r["reasons"]) >= 4 and r["reasons"][0].startswith("device " + r["device"]),
                      f"one reason per choice, the device first: {r['reasons']}")
                check(r["decode_tokens_per_s"] > 0, "the CPU's bandwidth was measured: a decode bound")
                kv = r["kv_precision"]
                same = last_json(run(cli, "estimate", model, "--device", r["device"], "--ctx",
                                     str(r["context_length"]), "--kv", kv, "--json"), "recommended config")
                check(same is not None and same["fits"] is True and same["total_bytes"] == r["total_bytes"] or
                      r["device"] != "cpu", f"the recommended configuration estimates the same and fits: {same}")
        bad = run(cli, "estimate", os.path.join(tmp, "missing.gguf"), "--json")
        check(bad.returncode != 0 and "missing.gguf" in bad.stderr, f"a missing model is named: {bad.stderr}")
        bad_kv = run(cli, "estimate", model, "--kv", "int3")
        check(bad_kv.returncode != 0 and "int3" in bad_kv.stderr, f"a bad --kv is named: {bad_kv.stderr}")
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
