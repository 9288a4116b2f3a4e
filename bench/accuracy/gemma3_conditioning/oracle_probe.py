#!/usr/bin/env python3
"""Float64 Gemma 3 oracle (tests/models/gemma3_oracle.py) on the CUDA test's
random-token sequences and on the text PROMPTS of gemma3_logits_test.py, plus
rounding-sensitivity probes of the same forward pass:
  f16act : every activation entering a weight matmul (and the K/V written to
           the cache) rounded to float16, rest float64
  q8act  : every activation entering a weight matmul rounded to symmetric
           8-bit blocks of 32 (Q8_0-like), rest float64
  f32    : the whole forward in float32 (weights and activations)
Writes oracle_<name>.npy (float64 logits of the rows, as float32), rows_<name>.npy
(position index of each row) and probe_<name>.json (per-row metrics).
Usage: g++ -std=c++20 -O1 gen_ids.cpp -o /tmp/gen_ids && /tmp/gen_ids > ids.txt
       OMP_NUM_THREADS=1 .venv/bin/python oracle_probe.py MODEL.gguf NAME [NAME ...]   (names: s0 s1 s2 long s0bos p0..p3)
(in the folder holding ids.txt, or OUT=that folder). docs/benchmarks.md, "The random-token rows"
has what it found.
"""
import json, os, sys, time
import numpy as np
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "models"))
import gemma3_oracle as G
import llama_oracle

OUT = os.environ.get("OUT", os.getcwd())  # ids.txt is read from here, results written here
VARIANTS = ["f64", "f16act", "q8act", "f32"]
PROMPTS = [
    "The capital of France is",
    "def fib(n):\n    return",
    "Once upon a time, in a small village at the edge of a great forest, there lived",
    "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17",
]


def q8(x):
    s = x.shape
    b = x.reshape(-1, 32)
    d = np.abs(b).max(axis=1, keepdims=True) / 127.0
    d = np.where(d == 0, 1.0, d)
    return (np.round(b / d) * d).reshape(s)


def rounder(variant):
    if variant == "f16act":
        return lambda x: x.astype(np.float16).astype(np.float64)
    if variant == "q8act":
        return q8
    return lambda x: x


def forward_hidden(w, tokens, rows, variant):
    """gemma3_oracle.forward up to the final norm, with rounding `variant`; returns x[rows]."""
    p = "gemma3."
    n_layer = int(w.meta(p + "block_count"))
    n_head = int(w.meta(p + "attention.head_count"))
    n_kv = int(w.meta(p + "attention.head_count_kv", n_head))
    n_embd = int(w.meta(p + "embedding_length"))
    hd = int(w.meta(p + "attention.key_length", n_embd // n_head))
    eps = float(w.meta(p + "attention.layer_norm_rms_epsilon"))
    base_global = float(w.meta(p + "rope.freq_base", 1e6))
    base_local = float(w.meta(p + "rope.freq_base_swa", 1e4))
    window = int(w.meta(p + "attention.sliding_window"))
    pattern = int(w.meta(p + "attention.sliding_window_pattern", G.PATTERN))
    dt = np.float32 if variant == "f32" else np.float64
    R = rounder(variant)
    kvr = R if variant == "f16act" else (lambda x: x)
    W = (lambda name: w.get(name).astype(np.float32)) if dt == np.float32 else w.get
    emb = w.embedding()
    x = emb[np.asarray(tokens)].astype(dt) * dt(np.sqrt(n_embd))
    n = len(tokens)
    pos = np.arange(n)
    for il in range(n_layer):
        b = f"blk.{il}."
        local = (il + 1) % pattern != 0
        h = R(G.rms(x, W(b + "attn_norm.weight"), dt(eps)))
        q = (h @ W(b + "attn_q.weight").T).reshape(n, n_head, hd)
        k = (h @ W(b + "attn_k.weight").T).reshape(n, n_kv, hd)
        v = (h @ W(b + "attn_v.weight").T).reshape(n, n_kv, hd)
        q = G.rms(q, W(b + "attn_q_norm.weight"), dt(eps))
        k = G.rms(k, W(b + "attn_k_norm.weight"), dt(eps))
        base = base_local if local else base_global
        q = llama_oracle.rope(q, pos, base, True).astype(dt)
        k = kvr(llama_oracle.rope(k, pos, base, True).astype(dt))
        v = kvr(v)
        a = G.attention(q, k, v, window if local else 0, dt(1.0 / np.sqrt(hd))).reshape(n, n_head * hd)
        x = x + G.rms(R(a) @ W(b + "attn_output.weight").T, W(b + "post_attention_norm.weight"), dt(eps))
        h = R(G.rms(x, W(b + "ffn_norm.weight"), dt(eps)))
        g = G.gelu_tanh(h @ W(b + "ffn_gate.weight").T) * (h @ W(b + "ffn_up.weight").T)
        x = x + G.rms(R(g) @ W(b + "ffn_down.weight").T, W(b + "post_ffw_norm.weight"), dt(eps))
        if not np.all(np.isfinite(x)):
            print(f"  {variant}: non-finite activations at layer {il}", flush=True)
    x = G.rms(x, W("output_norm.weight"), dt(eps))
    return R(x[rows])


def logits(w, xs):
    emb = w.embedding()
    out = np.empty((xs.shape[0], emb.shape[0]))
    for lo in range(0, emb.shape[0], 32768):
        e = emb[lo:lo + 32768]
        if xs.dtype == np.float32:
            out[:, lo:lo + 32768] = xs @ e.T
        else:
            out[:, lo:lo + 32768] = xs @ e.astype(np.float64).T
    return out


def sequences(model):
    seqs = {}
    with open(os.path.join(OUT, "ids.txt")) as f:
        for line in f:
            parts = line.split()
            seqs[parts[0]] = [int(t) for t in parts[1].split(",")]
    seqs["s0bos"] = [2] + seqs["s0"]
    import llama_cpp
    llm = llama_cpp.Llama(model_path=model, vocab_only=True, verbose=False)
    for i, t in enumerate(PROMPTS):
        seqs[f"p{i}"] = llm.tokenize(t.encode("utf-8"), add_bos=True, special=False)
    return seqs


def main():
    model, names = sys.argv[1], sys.argv[2:]
    w = G.Weights(model)
    seqs = sequences(model)
    with open(os.path.join(OUT, "all_ids.json"), "w") as f:
        json.dump(seqs, f)
    for name in names:
        toks = seqs[name]
        rows = np.arange(590, len(toks)) if name == "long" else np.arange(len(toks))
        t0 = time.time()
        hid = {v: forward_hidden(w, toks, rows, v) for v in VARIANTS}
        ref = logits(w, hid["f64"])
        # sanity: the unmodified oracle gives the same f64 logits
        if name in ("s1", "p0"):
            chk = G.forward(w, toks, rows=rows)
            print(f"  {name}: max |mine - gemma3_oracle.forward| = {np.abs(chk - ref).max():.3e}", flush=True)
        np.save(os.path.join(OUT, f"oracle_{name}.npy"), ref.astype(np.float32))
        np.save(os.path.join(OUT, f"rows_{name}.npy"), rows)
        res = []
        srt = np.sort(ref, axis=1)
        for i, r in enumerate(rows):
            d = {"pos": int(r), "token": int(toks[r]), "gap": float(srt[i, -1] - srt[i, -2]),
                 "norm": float(np.linalg.norm(ref[i])), "std": float(ref[i].std()), "max": float(srt[i, -1]),
                 "hidden_norm": float(np.linalg.norm(hid["f64"][i]))}
            res.append(d)
        for v in VARIANTS[1:]:
            lv = logits(w, hid[v])
            for i in range(len(rows)):
                res[i][v] = float(np.linalg.norm(lv[i] - ref[i]) / np.linalg.norm(ref[i]))
                res[i][v + "_argmax_same"] = bool(lv[i].argmax() == ref[i].argmax())
        with open(os.path.join(OUT, f"probe_{name}.json"), "w") as f:
            json.dump({"name": name, "n_tokens": len(toks), "rows": res}, f)
        e = {v: np.array([r[v] for r in res]) for v in VARIANTS[1:]}
        print(f"{name}: {len(toks)} tokens, {len(rows)} rows, {time.time() - t0:.1f}s; "
              + ", ".join(f"{v} mean {e[v].mean():.4f} max {e[v].max():.4f}" for v in VARIANTS[1:])
              + f"; gap median {np.median([r['gap'] for r in res]):.2f}", flush=True)


if __name__ == "__main__":
    main()
