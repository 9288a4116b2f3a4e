#!/usr/bin/env python3
"""Tokenizer parity with llama.cpp (llama-cpp-python, vocab_only) on Gemma 3
270M: a SentencePiece vocabulary (tokenizer.ggml.model 'llama', 262144 pieces
with byte fallback, add_space_prefix false, whitespace-run pieces), over the
HF oracle's corpus (tests/engine/tokenizer/tokenizer_corpus.py: prose, code,
numbers, whitespace runs, emoji/ZWJ, CJK, RTL, combining marks) plus strings
aimed at SentencePiece's corners, with special tokens parsed and as plain
text, no BOS/EOS added. Every document's ids must equal llama.cpp's.

Usage: peer_tokenizer_gemma3_test.py --tool TOKENIZE_TOOL --model M [--workdir D]
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "engine", "tokenizer"))
import peer_common as pc  # noqa: E402
import peer_tokenizer_test  # noqa: E402
import tokenizer_corpus  # noqa: E402
import tokenizer_oracle  # noqa: E402

SPM = ["Hello world", " leading space", "  two leading spaces", "trailing space ", "tabs\tand\nnewlines\n\n\n",
       "    indented code", "<start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n", "<bos>text<eos>",
       "émigré naïve café", "日本語のテキスト", "😀🎉 emoji", "\u200b zero width", "a" * 300, "x " * 100,
       "unknown byte \x7f here", "1234567890 3.14159", "<unused0> <mask> [multimodal]", "ＡＢＣ fullwidth"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--workdir", default=".")
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    path = pc.model_path(args.tool, args.model)
    llm = pc.load_llama(path, n_ctx=512, vocab_only=True)
    docs = tokenizer_corpus.build_corpus() + peer_tokenizer_test.EXTRA + SPM
    failures = 0
    for parse_special in (True, False):
        mode = "special tokens parsed" if parse_special else "special tokens as text"
        ours = tokenizer_oracle.run_tool(args.tool, args.model, args.workdir, docs, parse_special)["ids"]
        bad = []
        for k, doc in enumerate(docs):
            ref = llm.tokenize(doc.encode("utf-8"), add_bos=False, special=parse_special)
            if ours[k] != ref:
                bad.append(k)
                if len(bad) <= 5:
                    i = peer_tokenizer_test.first_difference(ours[k], ref)
                    print(f"  {mode}: doc {k} differs at token {i}: hearth {ours[k][max(0, i - 2):i + 3]}, "
                          f"llama.cpp {ref[max(0, i - 2):i + 3]}; text {doc[:80]!r}")
        n_ids = sum(len(x) for x in ours)
        print(f"{mode}: {len(docs) - len(bad)} of {len(docs)} documents identical to llama.cpp ({n_ids} ids)")
        failures += len(bad)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
