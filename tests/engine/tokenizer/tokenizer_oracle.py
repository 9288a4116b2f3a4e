"""Tokenizer parity and speed against HF `tokenizers`, built from the same GGUF.

  tokenizer_oracle.py parity --tool EXE --model M --workdir DIR
      Every id Hearth produces (tokenize_tool batch) equals HF's on a generated
      corpus of >= 1 MB, with special tokens parsed and not parsed, and
      decode(encode(x)) == x for every document.
  tokenizer_oracle.py bench --tool EXE --model M --workdir DIR
      MB/s of Hearth and HF on the same ~3 MB of mixed text.

The HF tokenizer is assembled from the GGUF's tokenizer.ggml.* arrays with the
python gguf package: BPE(vocab, merges), the pre-tokenizer the GGUF names
(smollm: Digits(individual_digits) then ByteLevel(add_prefix_space=False) with
the GPT-2 regex, as SmolLM2's own tokenizer.json), control tokens as special
added tokens, user-defined tokens as plain added tokens.
"""

import argparse
import json
import os
import subprocess
import sys
import time

import gguf
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tokenizer_corpus  # noqa: E402

LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
          r"|\s+(?!\S)|\s+")
QWEN2 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
         r"|\s+(?!\S)|\s+")


def field_strings(reader, key):
    f = reader.fields[key]
    return [bytes(f.parts[i]).decode("utf-8") for i in f.data]


def field_ints(reader, key):
    f = reader.fields[key]
    return [int(f.parts[i][0]) for i in f.data]


def hf_pre_tokenizer(pre):
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    if pre == "smollm":
        return pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), byte_level]), False
    if pre == "gpt2":
        return byte_level, False
    pattern = {"llama3": LLAMA3, "llama-bpe": LLAMA3, "qwen2": QWEN2, "deepseek-r1-qwen": QWEN2}.get(pre)
    if pattern is None:
        sys.exit(f"FAIL: the oracle has no HF equivalent of pre-tokenizer {pre!r}")
    split = pre_tokenizers.Split(Regex(pattern), behavior="isolated")
    no_regex = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    return pre_tokenizers.Sequence([split, no_regex]), pre in ("llama3", "llama-bpe")


def hf_tokenizer(path):
    r = gguf.GGUFReader(path)
    model = bytes(r.fields["tokenizer.ggml.model"].parts[-1]).decode()
    if model != "gpt2":
        sys.exit(f"FAIL: the oracle builds byte-level BPE only, {path} has {model!r}")
    pre = bytes(r.fields["tokenizer.ggml.pre"].parts[-1]).decode()
    tokens = field_strings(r, "tokenizer.ggml.tokens")
    types = field_ints(r, "tokenizer.ggml.token_type")
    merges = [tuple(m.split(" ", 1)) for m in field_strings(r, "tokenizer.ggml.merges")]
    vocab = {}
    for i, t in enumerate(tokens):
        vocab.setdefault(t, i)
    pre_tok, ignore_merges = hf_pre_tokenizer(pre)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False, byte_fallback=False,
                               ignore_merges=ignore_merges))
    tok.pre_tokenizer = pre_tok
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(tokens[i], special=True, normalized=False)
                            for i, t in enumerate(types) if t == 3])
    tok.add_tokens([AddedToken(tokens[i], special=False, normalized=False) for i, t in enumerate(types) if t == 4])
    return tok, tokens


def model_path(tool, model):
    p = subprocess.run([tool, model, "path"], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"FAIL: tokenize_tool could not resolve {model}: {p.stderr.strip()}")
    return p.stdout.strip()


def run_tool(tool, model, workdir, docs, parse_special, extra=()):
    src = os.path.join(workdir, "tokenizer_corpus.json")
    dst = os.path.join(workdir, "tokenizer_ids.json")
    with open(src, "w", encoding="utf-8") as f:
        json.dump(docs, f, ensure_ascii=False)
    cmd = [tool, model, "batch", src, dst] + (["--parse-special"] if parse_special else []) + list(extra)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()}")
    with open(dst, encoding="utf-8") as f:
        return json.load(f)


def describe_mismatch(doc, ours, ref, tokens):
    i = next((k for k in range(min(len(ours), len(ref))) if ours[k] != ref[k]), min(len(ours), len(ref)))
    lo = max(0, i - 3)
    show = lambda ids: [(t, tokens[t]) for t in ids[lo:i + 4]]  # noqa: E731
    return (f"  first difference at token {i} (hearth {len(ours)} tokens, HF {len(ref)}):\n"
            f"    hearth {show(ours)}\n    HF     {show(ref)}\n    text starts {doc[:120]!r}")


def cmd_parity(args):
    os.makedirs(args.workdir, exist_ok=True)
    path = model_path(args.tool, args.model)
    tok, tokens = hf_tokenizer(path)
    docs = tokenizer_corpus.build_corpus()
    docs.append("".join(docs))  # the whole corpus as one text too
    size = sum(len(d.encode("utf-8")) for d in docs[:-1])
    failures = 0
    for parse_special in (True, False):
        tok.encode_special_tokens = not parse_special
        ref = [e.ids for e in tok.encode_batch(docs, add_special_tokens=False)]
        out = run_tool(args.tool, args.model, args.workdir, docs, parse_special)
        bad = [k for k in range(len(docs)) if out["ids"][k] != ref[k]]
        n_ids = sum(len(r) for r in ref)
        mode = "special tokens parsed" if parse_special else "special tokens as text"
        if bad or out["roundtrip_failures"]:
            failures += 1
            print(f"FAIL ({mode}): {len(bad)} of {len(docs)} documents differ from HF; "
                  f"round-trip failures: {out['roundtrip_failures'][:20]}")
            for k in bad[:8]:
                print(describe_mismatch(docs[k], out["ids"][k], ref[k], tokens))
        else:
            print(f"OK ({mode}): {len(docs)} documents, {size} bytes, {n_ids} ids equal to HF; "
                  "decode(encode(x)) == x for all")
    return 1 if failures else 0


def cmd_bench(args):
    os.makedirs(args.workdir, exist_ok=True)
    path = model_path(args.tool, args.model)
    tok, _ = hf_tokenizer(path)
    tok.encode_special_tokens = True  # tokenize_tool bench does not parse special tokens either
    text = "".join(d for seed in (1, 2, 3) for d in tokenizer_corpus.build_corpus(seed, 1_000_000))
    src = os.path.join(args.workdir, "tokenizer_bench.txt")
    with open(src, "w", encoding="utf-8") as f:
        f.write(text)
    mb = len(text.encode("utf-8")) / 1e6
    p = subprocess.run([args.tool, args.model, "bench", src, "--repeat", "3"], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"FAIL: tokenize_tool bench: {p.stderr.strip()}")
    ours = json.loads(p.stdout)
    hf_runs = []
    for _ in range(3):
        t0 = time.perf_counter()
        n_hf = len(tok.encode(text, add_special_tokens=False).ids)
        hf_runs.append(mb / (time.perf_counter() - t0))
    lines = text.splitlines(keepends=True)
    t0 = time.perf_counter()
    tok.encode_batch(lines, add_special_tokens=False)
    hf_batch = mb / (time.perf_counter() - t0)
    if n_hf != ours["tokens"]:
        print(f"FAIL: hearth made {ours['tokens']} tokens, HF {n_hf}")
        return 1
    print(f"tokenizer speed on {mb:.2f} MB of mixed text, {n_hf} tokens on both sides:")
    print(f"  hearth (1 thread):       first {ours['mb_per_s'][0]:.2f} MB/s (cold word cache), "
          f"best {max(ours['mb_per_s']):.2f} MB/s")
    print(f"  HF tokenizers encode():  best {max(hf_runs):.2f} MB/s (one call on the whole text)")
    print(f"  HF encode_batch(lines):  {hf_batch:.2f} MB/s ({os.cpu_count()} CPUs, parallel)")
    print(f"  ratio hearth / HF encode(): {max(ours['mb_per_s']) / max(hf_runs):.2f}")
    return 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("parity", "bench"):
        c = sub.add_parser(name)
        c.add_argument("--tool", required=True)
        c.add_argument("--model", default="default")
        c.add_argument("--workdir", default=".")
    args = ap.parse_args()
    return cmd_parity(args) if args.cmd == "parity" else cmd_bench(args)


if __name__ == "__main__":
    sys.exit(main())
