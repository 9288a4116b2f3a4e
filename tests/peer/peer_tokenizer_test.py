#!/usr/bin/env python3
"""Tokenizer parity with llama.cpp (llama-cpp-python, vocab_only) on the
default model, over the corpus of the HF tokenizer oracle
(tests/engine/tokenizer/tokenizer_corpus.py, >= 1 MB of prose, code, numbers,
whitespace runs, emoji/ZWJ, CJK, RTL scripts, combining marks, special-token
strings), with special tokens parsed and as plain text, no BOS/EOS added
(SmolLM2 adds none; add_bos_token = false).

Every document's ids must equal llama.cpp's. Where they do not, the HF
tokenizer built from the same GGUF (tokenizer_oracle.hf_tokenizer: the
pre-tokenizer of SmolLM2's own tokenizer.json, Digits(individual) then
ByteLevel with the GPT-2 regex) decides which side reproduces the model's
original tokenizer: a document where Hearth equals HF and llama.cpp differs is
a llama.cpp deviation, reported with its first differing tokens and not
failed; anything else fails.

Usage: peer_tokenizer_test.py --tool TOKENIZE_TOOL [--model M] [--workdir D]
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "engine", "tokenizer"))
import peer_common as pc  # noqa: E402
import tokenizer_corpus  # noqa: E402
import tokenizer_oracle  # noqa: E402

# Where Unicode-table or regex implementations tend to differ: numerals outside
# Nd (Nl, No, other scripts' digits: \p{N} splits them one by one), newer
# emoji, private use and tag characters, format characters, unusual spaces.
EXTRA = ["Ⅻ Roman", "½ cup", "x² + y³", "١٢٣٤ digits", "٣.١٤", "१२३ हिन्दी", "🫨 new emoji", "\ue000 private",
         "\U000e0001 tag", "a\u0301\u0302b", "  \u3000  x", "\t\t\n\n  \r\n", "hello\u00a0world", "𝟙𝟚𝟛", "①②③",
         "don’t it’s", "I'M HERE'S", "\u0085next", "a\u2028b", "\u200d\u200c", "x\u00ad y", "12,345.67",
         "<|im_start|>user", "🧑\u200d💻", "\x00\x01", "ǅungla", "ᾼ", "ﷺ", "𓀀 hiero", "\ufffd", "🇦🇧🇨", "\u2060word",
         "a  \n  b", " \u00a0 "]


def first_difference(a, b):
    return next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))


def show(doc, ours, ref, tokens, label):
    i = first_difference(ours, ref)
    lo = max(0, i - 2)
    fmt = lambda ids: [(t, tokens[t]) for t in ids[lo:i + 3]]  # noqa: E731
    return (f"    first difference at token {i}: hearth {fmt(ours)}\n"
            f"                              {label} {fmt(ref)}\n    text {doc[:100]!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--model", default="default")
    ap.add_argument("--workdir", default=".")
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    path = pc.model_path(args.tool, args.model)
    llm = pc.load_llama(path, n_ctx=512, vocab_only=True)
    hf, tokens = tokenizer_oracle.hf_tokenizer(path)
    docs = tokenizer_corpus.build_corpus()
    size = sum(len(d.encode("utf-8")) for d in docs)
    docs.append("".join(docs))  # the whole corpus as one text too
    docs.extend(EXTRA)
    failures = 0
    for parse_special in (True, False):
        mode = "special tokens parsed" if parse_special else "special tokens as text"
        ours = tokenizer_oracle.run_tool(args.tool, args.model, args.workdir, docs, parse_special)["ids"]
        hf.encode_special_tokens = not parse_special
        hf_all = [e.ids for e in hf.encode_batch(docs, add_special_tokens=False)]
        equal, deviations, bad, hf_agree = 0, [], [], 0
        for k, doc in enumerate(docs):
            ref = llm.tokenize(doc.encode("utf-8"), add_bos=False, special=parse_special)
            hf_ids = hf_all[k]
            hf_agree += ref == hf_ids
            if ours[k] == ref:
                equal += 1
                continue
            (deviations if ours[k] == hf_ids else bad).append((k, ref, hf_ids))
        n_ids = sum(len(ids) for ids in ours)
        print(f"{mode}: {equal} of {len(docs)} documents ({size} bytes of corpus + the corpus as one text + {len(EXTRA)} edge cases; {n_ids} ids) equal to llama.cpp")
        for k, ref, _ in deviations[:8]:
            print(f"  llama.cpp deviates from the original tokenizer (Hearth == HF) in document {k}:")
            print(show(docs[k], ours[k], ref, tokens, "llama.cpp"))
        for k, ref, hf_ids in bad[:8]:
            print(f"  FAIL document {k}: Hearth differs from llama.cpp and from HF")
            print(show(docs[k], ours[k], ref, tokens, "llama.cpp"))
            print(show(docs[k], ours[k], hf_ids, tokens, "HF       "))
        print(f"  {len(deviations)} llama.cpp deviations (reported), {len(bad)} failures; llama.cpp and HF agree "
              f"on {hf_agree} of {len(docs)} documents")
        failures += len(bad)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
