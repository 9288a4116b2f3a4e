#!/usr/bin/env python3
"""Hearth against llama.cpp (llama-cpp-python, same GGUF, 2 threads) on the
default model (and, with --model, others: Gemma 3 270M).

  peer_parity_test.py greedy --tool PEER_TOOL [--model M] [--workdir D]
      Greedy continuations (N_NEW tokens, stopping at <|endoftext|> / <|im_end|>)
      of PROMPTS, plain text and ChatML rendered by jinja2 from the GGUF's own
      template. Both engines get the SAME token ids (tokenized once, by
      llama.cpp), so tokenizer differences cannot leak in (tokenizer parity is
      peer_tokenizer_test.py). Hearth runs with --q8-activations, i.e. the same
      8-bit activation rounding as llama.cpp (its default refines blocks that
      hold an outlier, which moves it closer to the exact result and away from
      llama.cpp's; models_llama_logits_smollm2 checks that against numpy).
      The token sequences must be identical. At the
      first divergence of a prompt, if the two tokens are within NEAR_TIE logits
      of each other in BOTH engines' logits at that step, it is a near-tie: it
      is reported and that prompt's comparison stops there; any other
      divergence fails.
  peer_parity_test.py perplexity --tool PEER_TOOL --text FILE [--ctx 512]
      Perplexity of both engines on the same token ids (llama.cpp's perplexity
      tool convention: non-overlapping windows of CTX tokens, scoring the
      second half of each; no BOS inserted, or with --bos-windows each window's
      first token replaced by BOS as llama.cpp's tool does for models that want
      it: Gemma) must agree within --limit (default 1%; see tests/peer/CMakeLists.txt for Gemma 3's measured gap). Hearth runs with its default (refined) activations.

Why NEAR_TIE = 0.5 logits: SmolLM2's hidden states carry massive outlier
channels, and both engines round activations to 8-bit blocks before the
integer dot products, so a difference in the last float bit (summation order)
can move a block's rounding and the logits after it by tenths. llama.cpp shows
this against itself on the same file: the same 17-token prompt evaluated in
one batch or token by token gives logits up to 0.45 apart (relative L2 1.3%),
flash attention on or off up to 0.66 (2.4%), with the same kernels and
quantization. A divergence is therefore a near-tie when the two candidate
tokens are closer than 0.5 in BOTH engines' logits at that step; a larger gap
in either engine fails. With --baseline the script also runs llama.cpp with
flash attention on and reports its divergences from llama.cpp (flash attention
off) under the same rule, as the baseline for what "agreeing with llama.cpp" can
mean on this model. Measured (2026-11-29): Hearth vs llama.cpp 3 of 10
prompts identical, 7 near-ties with gaps 0.01-0.34; llama.cpp flash attention
on vs off 2 of 10 identical, 8 near-ties with gaps up to 0.30.
"""

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_common as pc  # noqa: E402

N_NEW = 64
NEAR_TIE = 0.5
STOP = [0, 2]  # <|endoftext|>, <|im_end|>

PLAIN = [
    "The capital of France is",
    "Once upon a time, in a small village at the edge of a great forest,",
    "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n",
    "The three primary colors are",
    "Water boils at 100 degrees Celsius. At the top of a high mountain,",
]
CHATS = [
    [{"role": "user", "content": "What is the capital of France?"}],
    [{"role": "system", "content": "You are a concise assistant."},
     {"role": "user", "content": "Give me three tips for sleeping better."}],
    [{"role": "user", "content": "Write a haiku about the sea."}],
    [{"role": "user", "content": "Hi! My name is Ada."},
     {"role": "assistant", "content": "Hello Ada! How can I help you today?"},
     {"role": "user", "content": "What is 12 times 7? Explain briefly."}],
    [{"role": "user", "content": "Translate 'good morning' into Spanish and German."}],
]


def prompts(llm):
    """PLAIN, and CHATS rendered by the file's template; a file without one
    (Gemma 3 270M, a base model) gets the plain prompts only."""
    template = llm.metadata.get("tokenizer.chat_template")
    texts = [(f"plain {i}", t) for i, t in enumerate(PLAIN)]
    if template:
        texts += [(f"chat {i}", pc.render_chat(template, m)) for i, m in enumerate(CHATS)]
    return [(name, text, llm.tokenize(text.encode("utf-8"), add_bos=True, special=True)) for name, text in texts]


def stop_tokens(llm):
    """SmolLM2's <|endoftext|> / <|im_end|>; other files their EOS and
    <end_of_turn> (Gemma) where the vocabulary has it."""
    if llm.metadata.get("tokenizer.chat_template", "").count("<|im_end|>"):
        return STOP
    stop = [int(llm.metadata["tokenizer.ggml.eos_token_id"])]
    eot = llm.tokenize(b"<end_of_turn>", add_bos=False, special=True)
    return stop + (eot if len(eot) == 1 else [])


def llama_greedy(llm, prompt, follow=None):
    """Greedy tokens and the full logits of every step. With `follow` (the
    other engine's tokens), stops after the first step that differs from it:
    only the common prefix and the divergence step are compared."""
    llm.reset()
    llm.eval(prompt)
    tokens, logits = [], []
    while len(tokens) < N_NEW:
        row = pc.last_logits(llm)
        tok = int(np.argmax(row))
        tokens.append(tok)
        logits.append(row)
        if tok in llm.hearth_stop or (follow is not None and (len(follow) < len(tokens) or follow[len(tokens) - 1] != tok)):
            break
        llm.eval([tok])
    return tokens, logits


def top5(logits):
    return [[[int(t), float(row[t])] for t in np.argsort(-row, kind="stable")[:5]] for row in logits]


def compare(name, ours, theirs, their_logits, tokenize, label="hearth"):
    """0 when equal or a reported near-tie, 1 for a real divergence; also the
    largest |logit difference| over our top-5 on the matched steps, and the
    number of matched steps."""
    mine, top = ours["tokens"], ours["top"]
    max_diff = 0.0
    for i in range(min(len(mine), len(theirs))):
        for tid, logit in top[i]:
            max_diff = max(max_diff, abs(logit - float(their_logits[i][tid])))
        if mine[i] == theirs[i]:
            continue
        h, l = mine[i], theirs[i]
        gap_llama = float(their_logits[i][l] - their_logits[i][h])
        ours_top = dict((t, v) for t, v in top[i])
        gap_hearth = ours_top[h] - ours_top[l] if l in ours_top else float("inf")
        where = (f"{name}: step {i}: {label} {h} {tokenize(h)!r}, llama.cpp {l} {tokenize(l)!r}; "
                 f"gap in llama.cpp's logits {gap_llama:.4f}, in {label}'s {gap_hearth:.4f}")
        if gap_llama < NEAR_TIE and gap_hearth < NEAR_TIE:
            print(f"NEAR-TIE (reported, not failed) {where}")
            return 0, max_diff, i
        print(f"FAIL divergence {where}")
        return 1, max_diff, i
    if len(mine) != len(theirs):
        print(f"FAIL {name}: {label} made {len(mine)} tokens, llama.cpp {len(theirs)}")
        return 1, max_diff, min(len(mine), len(theirs))
    return 0, max_diff, len(mine)


def cmd_greedy(args):
    os.makedirs(args.workdir, exist_ok=True)
    path = pc.model_path(args.tool, args.model)
    llm = pc.load_llama(path, n_ctx=512)
    llm.hearth_stop = stop_tokens(llm)
    cases = prompts(llm)
    src, dst = os.path.join(args.workdir, "greedy_in.json"), os.path.join(args.workdir, "greedy_out.json")
    with open(src, "w") as f:
        json.dump({"prompts": [ids for _, _, ids in cases], "stop": llm.hearth_stop}, f)
    t0 = time.perf_counter()
    # In llama.cpp's arithmetic (plain 8-bit activation blocks): the parity of
    # the implementation, not of Hearth's finer default rounding.
    pc.run([args.tool, "--q8-activations", "generate", args.model, "2", str(N_NEW), src, dst])
    t_hearth = time.perf_counter() - t0
    with open(dst) as f:
        ours = json.load(f)
    piece = lambda t: llm.detokenize([t], special=True).decode("utf-8", "replace")  # noqa: E731
    failures, identical, worst = 0, 0, 0.0
    t0 = time.perf_counter()
    for (name, text, ids), out in zip(cases, ours):
        theirs, logits = llama_greedy(llm, ids, follow=out["tokens"])
        bad, diff, matched = compare(name, out, theirs, logits, piece)
        failures += bad
        worst = max(worst, diff)
        same = out["tokens"] == theirs
        identical += same
        print(f"{'OK  ' if same else '    '}{name}: {len(ids)} prompt tokens, {matched} of {len(out['tokens'])} generated "
              f"tokens equal, max |logit diff| {diff:.4f}: {llm.detokenize(theirs[:24]).decode('utf-8', 'replace')!r}")
    t_llama = time.perf_counter() - t0
    print(f"hearth vs llama.cpp: {identical} of {len(cases)} prompts identical; largest top-5 logit difference "
          f"{worst:.4f}; hearth {t_hearth:.1f} s, llama.cpp {t_llama:.1f} s")
    if args.baseline:
        baseline(path, cases, piece)
    return 1 if failures else 0


def baseline(path, cases, piece):
    """llama.cpp with flash attention against llama.cpp without: the same
    comparison, reported only (it is the yardstick, not the subject)."""
    llm = pc.load_llama(path, n_ctx=512)
    llm_fa = pc.load_llama(path, n_ctx=512, flash_attn=True)
    llm.hearth_stop = llm_fa.hearth_stop = stop_tokens(llm)
    identical, worst = 0, 0.0
    for name, _, ids in cases:
        theirs, logits = llama_greedy(llm, ids)
        tokens, fa_logits = llama_greedy(llm_fa, ids)
        _, diff, matched = compare(name, {"tokens": tokens, "top": top5(fa_logits)}, theirs, logits, piece,
                                   label="llama.cpp+flash-attn")
        identical += tokens == theirs
        worst = max(worst, diff)
    print(f"baseline, llama.cpp flash attention on vs off: {identical} of {len(cases)} prompts identical; "
          f"largest top-5 logit difference {worst:.4f}")


def llama_perplexity(llm, ids, ctx):
    first, nll = ctx // 2, []
    for w in range(len(ids) // ctx):
        window = ids[w * ctx:(w + 1) * ctx]
        llm.reset()
        llm.eval(window)
        logits = np.asarray(llm.scores[first:ctx - 1], dtype=np.float64)
        m = logits.max(axis=1, keepdims=True)
        lse = np.log(np.exp(logits - m).sum(axis=1)) + m[:, 0]
        nll.extend(lse - logits[np.arange(len(logits)), window[first + 1:ctx]])
    nll = np.asarray(nll)
    ppl = float(np.exp(nll.mean()))
    return ppl, ppl * float(nll.std(ddof=1) / np.sqrt(len(nll))), len(nll)


def cmd_perplexity(args):
    os.makedirs(args.workdir, exist_ok=True)
    path = pc.model_path(args.tool, args.model)
    with open(args.text, "rb") as f:
        text = f.read()
    llm = pc.load_llama(path, n_ctx=args.ctx, logits_all=True)
    ids = llm.tokenize(text, add_bos=False, special=False)
    if args.bos_windows:
        # llama.cpp's perplexity tool for models that want BOS: each window's
        # first token becomes BOS (never scored: only second halves are).
        bos = int(llm.metadata["tokenizer.ggml.bos_token_id"])
        for w in range(len(ids) // args.ctx):
            ids[w * args.ctx] = bos
    if len(ids) < 2 * args.ctx:
        print(f"FAIL: {args.text} has {len(ids)} tokens, fewer than two windows of {args.ctx}")
        return 1
    src = os.path.join(args.workdir, "perplexity_ids.json")
    with open(src, "w") as f:
        json.dump(ids, f)
    ours = json.loads(pc.run([args.tool, "perplexity", args.model, "2", str(args.ctx), src]))
    t0 = time.perf_counter()
    ppl, err, n = llama_perplexity(llm, ids, args.ctx)
    t_llama = time.perf_counter() - t0
    rel = abs(ours["perplexity"] - ppl) / ppl
    print(f"{len(ids)} tokens, ctx {args.ctx}, {ours['windows']} windows, {n} scored tokens")
    print(f"  hearth    perplexity {ours['perplexity']:.4f} +/- {ours['perplexity_err']:.4f} "
          f"({ours['seconds']:.1f} s)")
    print(f"  llama.cpp perplexity {ppl:.4f} +/- {err:.4f} ({t_llama:.1f} s)")
    print(f"  relative difference {100 * rel:.3f}% (limit {100 * args.limit:g}%)")
    if ours["scored_tokens"] != n:
        print(f"FAIL: scored {ours['scored_tokens']} tokens, llama.cpp side {n}")
        return 1
    return 0 if rel < args.limit else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["greedy", "perplexity"])
    ap.add_argument("--tool", required=True)
    ap.add_argument("--model", default="default")
    ap.add_argument("--workdir", default=".")
    ap.add_argument("--text")
    ap.add_argument("--ctx", type=int, default=512)
    ap.add_argument("--bos-windows", action="store_true", help="perplexity: each window starts with BOS")
    ap.add_argument("--limit", type=float, default=0.01, help="perplexity: largest relative difference allowed")
    ap.add_argument("--baseline", action="store_true", help="also compare llama.cpp with flash attention on and off")
    args = ap.parse_args()
    return cmd_greedy(args) if args.cmd == "greedy" else cmd_perplexity(args)


if __name__ == "__main__":
    sys.exit(main())
