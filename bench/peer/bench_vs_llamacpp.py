#!/usr/bin/env python3
"""hearth-bench peer comparison: Hearth against llama.cpp (llama-cpp-python,
the same GGUF, the same thread count, the same token ids) in one run.

Measures, for the default model:
  - prefill tok/s of a 128- and a 512-token prompt (one forward pass from an
    empty cache, logits of the last token only, on both sides);
  - decode tok/s of 128 greedy tokens after a 16-token prompt (EOS ignored;
    each step's arg-max is taken, in C++ for Hearth, numpy for llama.cpp);
  - the machine's read bandwidth (THREADS threads summing a 512 MiB buffer)
    and decode's fraction of the bandwidth ceiling: weight bytes read per
    token (every matrix once, the tied embedding as the output matrix)
    x decode tok/s / bandwidth.
Repetitions are interleaved (Hearth, llama.cpp, alternating who goes first)
after one warm-up round, so load from other processes hits both alike; the
report gives medians, the spread (min-max) and the load average.

Usage: bench_vs_llamacpp.py --tool BUILD/bench/peer/hearth-bench-peer [--threads 2] [--reps 7] [--q8-activations]
                            [--text tests/peer/data/public_domain.txt] [--model default]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "peer"))
import peer_common as pc  # noqa: E402


class Hearth:
    def __init__(self, tool, model, threads, q8=False):
        self.p = subprocess.Popen([tool, model, str(threads)] + (["--q8-activations"] if q8 else []), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True)
        hello = json.loads(self.p.stdout.readline() or "{}")
        if not hello.get("ready"):
            sys.exit("FAIL: hearth-bench-peer did not start")
        self.path = hello["path"]

    def ask(self, **req):
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        reply = json.loads(self.p.stdout.readline())
        if "error" in reply:
            sys.exit(f"FAIL: hearth-bench-peer: {reply['error']}")
        return reply

    def prefill(self, ids):
        return self.ask(op="prefill", ids=ids)["seconds"]

    def decode(self, prompt, n):
        r = self.ask(op="decode", prompt=prompt, n=n)
        return r["seconds"], r["tokens"], r["step_seconds"]


class Llama:
    def __init__(self, path, threads):
        self.llm = pc.load_llama(path, n_ctx=1024, threads=threads)

    def prefill(self, ids):
        self.llm.reset()
        t0 = time.perf_counter()
        self.llm.eval(ids)
        return time.perf_counter() - t0

    def decode(self, prompt, n):
        self.llm.reset()
        self.llm.eval(prompt)
        out, steps = [], []
        t0 = time.perf_counter()
        for _ in range(n):
            s0 = time.perf_counter()
            out.append(int(np.argmax(pc.last_logits(self.llm))))
            self.llm.eval([out[-1]])
            steps.append(time.perf_counter() - s0)
        return time.perf_counter() - t0, out, steps


def summary(times, tokens):
    """(median, best, worst) tok/s over repetitions. Load from other processes
    only ever slows a run down, so the best is the least disturbed one."""
    rates = sorted(tokens / t for t in times)
    return statistics.median(rates), rates[-1], rates[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--model", default="default")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--q8-activations", action="store_true",
                    help="Hearth with plain 8-bit activation blocks (llama.cpp's arithmetic) instead of its default")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--text", default=os.path.join(ROOT, "tests", "peer", "data", "public_domain.txt"))
    args = ap.parse_args()
    load_start = os.getloadavg()
    hearth = Hearth(args.tool, args.model, args.threads, args.q8_activations)
    llama = Llama(hearth.path, args.threads)
    with open(args.text, "rb") as f:
        ids = llama.llm.tokenize(f.read(), add_bos=False)
    cases = {"prefill 128": ids[:128], "prefill 512": ids[:512]}
    decode_prompt, n_decode = ids[:16], 128
    results = {name: ([], []) for name in list(cases) + ["decode 128"]}
    steps = ([], [])  # every decode step's seconds, pooled over repetitions
    same_tokens = True
    for rep in range(args.reps + 1):  # round 0 warms up and is dropped
        order = [hearth, llama] if rep % 2 == 0 else [llama, hearth]
        for name, prompt in cases.items():
            for eng in order:
                t = eng.prefill(prompt)
                if rep:
                    results[name][eng is llama].append(t)
        toks = {}
        for eng in order:
            t, toks[eng is llama], per_step = eng.decode(decode_prompt, n_decode)
            if rep:
                results["decode 128"][eng is llama].append(t)
                steps[eng is llama].extend(per_step)
        same_tokens &= toks[False] == toks[True]
    info = hearth.ask(op="info")
    bw = hearth.ask(op="bandwidth", mib=512, threads=args.threads)["gb_per_s"]
    load_end = os.getloadavg()

    print(f"model {os.path.basename(hearth.path)}, {args.threads} threads, {args.reps} interleaved repetitions "
          f"(+1 warm-up); load average {load_start[0]:.2f} at start, {load_end[0]:.2f} at end, "
          f"{os.cpu_count()} CPUs")
    print("| test | Hearth tok/s: best / median (worst) | llama.cpp tok/s: best / median (worst) "
          "| Hearth / llama.cpp: best / median |")
    print("|---|---|---|---|")
    for name, (ours, theirs) in results.items():
        n = n_decode if name.startswith("decode") else len(cases[name])
        h, l = summary(ours, n), summary(theirs, n)
        print(f"| {name} | {h[1]:.1f} / {h[0]:.1f} ({h[2]:.1f}) | {l[1]:.1f} / {l[0]:.1f} ({l[2]:.1f}) "
              f"| {h[1] / l[1]:.2f} / {h[0] / l[0]:.2f} |")
    h_step, l_step = 1 / statistics.median(steps[0]), 1 / statistics.median(steps[1])
    print(f"| decode, 1 / median step time over all {len(steps[0])} steps | {h_step:.1f} | {l_step:.1f} "
          f"| {h_step / l_step:.2f} |")
    wb = info["weights_bytes"]
    ceiling = bw * 1e9 / wb
    h_dec, l_dec = h_step, l_step
    print(f"read bandwidth ({args.threads} threads, 512 MiB): {bw:.1f} GB/s; weights read per token "
          f"{wb / 1e6:.1f} MB; decode ceiling {ceiling:.0f} tok/s; Hearth at {100 * h_dec / ceiling:.0f}% of it, "
          f"llama.cpp at {100 * l_dec / ceiling:.0f}%")
    print(f"greedy decode tokens identical on both sides: {'yes' if same_tokens else 'no'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
