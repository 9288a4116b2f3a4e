"""Gemma 3 270M: how far each engine's logits are from the float64 reference
(tests/models/gemma3_oracle.py) on the first N tokens of
tests/peer/data/public_domain.txt: relative L2 error of each position's
logits and the change of each token's NLL, for llama.cpp (llama-cpp-python),
Hearth (llama_logits_tool, refined and plain 8-bit activations) and numpy
emulations of 8-bit activation blocks at one op group at a time (the table
"Gemma 3: blocks peaked against their own RMS" of docs/benchmarks.md).

Usage: bench/accuracy/gemma3_act_precision.py [N_TOKENS] [build/dev/tests/models/llama_logits_tool]
       bench/accuracy/gemma3_act_precision.py [N_TOKENS] --down-criteria   (the refinement criteria rows)
(about 10 minutes for 96 tokens on 2 cores; a measurement, not a test)"""
import os, subprocess, sys, tempfile
import numpy as np
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "models"))
import gemma3_oracle as G
import llama_oracle, gguf

def _model():
    d = os.environ.get("HEARTH_MODELS_DIR") or os.path.join(
        os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share"), "hearth", "models")
    return os.path.join(d, "gemma-3-270m-q4_k_m.gguf")


MODEL = _model()
TEXT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "peer", "data", "public_domain.txt")
N = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 96; TOOL = sys.argv[2] if len(sys.argv) > 2 else None
KQ = {gguf.GGMLQuantizationType.Q4_K, gguf.GGMLQuantizationType.Q6_K, gguf.GGMLQuantizationType.Q5_K}

def q8(x, block):
    sh = x.shape
    x = x.reshape(-1, sh[-1] // block, block)
    amax = np.abs(x).max(axis=-1, keepdims=True)
    d = (amax / 127.0).astype(np.float32).astype(np.float64)
    inv = np.where(d > 0, 1.0 / np.where(d > 0, d, 1), 0)
    return (np.clip(np.round(x * inv), -127, 127) * d).reshape(sh)

def forward(w, types, tokens, modes):
    p = "gemma3."
    n_layer = int(w.meta(p + "block_count")); n_head = int(w.meta(p + "attention.head_count"))
    n_kv = int(w.meta(p + "attention.head_count_kv")); n_embd = int(w.meta(p + "embedding_length"))
    hd = int(w.meta(p + "attention.key_length")); eps = float(w.meta(p + "attention.layer_norm_rms_epsilon"))
    window = int(w.meta(p + "attention.sliding_window"))
    def act(x, name, group):
        if "q8" in modes or ("q8" + group) in modes:
            return q8(x, 256 if types[name] in KQ else 32)
        return x
    emb = w.embedding()
    x = emb[np.asarray(tokens)].astype(np.float64) * np.sqrt(np.float64(n_embd))
    n = len(tokens); pos = np.arange(n)
    for il in range(n_layer):
        b = f"blk.{il}."; local = (il + 1) % 6 != 0
        h = G.rms(x, w.get(b + "attn_norm.weight"), eps)
        q = (act(h, b + "attn_q.weight", "qkv") @ w.get(b + "attn_q.weight").T).reshape(n, n_head, hd)
        k = (act(h, b + "attn_k.weight", "qkv") @ w.get(b + "attn_k.weight").T).reshape(n, n_kv, hd)
        v = (act(h, b + "attn_v.weight", "qkv") @ w.get(b + "attn_v.weight").T).reshape(n, n_kv, hd)
        q = G.rms(q, w.get(b + "attn_q_norm.weight"), eps); k = G.rms(k, w.get(b + "attn_k_norm.weight"), eps)
        base = 1e4 if local else 1e6
        q = llama_oracle.rope(q, pos, base, True); k = llama_oracle.rope(k, pos, base, True)
        if "kv16" in modes:
            k = k.astype(np.float16).astype(np.float64); v = v.astype(np.float16).astype(np.float64)
        if "q16" in modes:
            q = q.astype(np.float16).astype(np.float64)
        a = G.attention(q, k, v, window if local else 0, 1.0 / np.sqrt(hd)).reshape(n, n_head * hd)
        x = x + G.rms(act(a, b + "attn_output.weight", "o") @ w.get(b + "attn_output.weight").T, w.get(b + "post_attention_norm.weight"), eps)
        h = G.rms(x, w.get(b + "ffn_norm.weight"), eps)
        g = G.gelu_tanh(act(h, b + "ffn_gate.weight", "gu") @ w.get(b + "ffn_gate.weight").T) * (act(h, b + "ffn_up.weight", "gu") @ w.get(b + "ffn_up.weight").T)
        x = x + G.rms(act(g, b + "ffn_down.weight", "down") @ w.get(b + "ffn_down.weight").T, w.get(b + "post_ffw_norm.weight"), eps)
    x = act(G.rms(x, w.get("output_norm.weight"), eps), "token_embd.weight", "out")
    return x @ emb.astype(np.float64).T

def stats_of(ref, got, tokens):
    err = np.linalg.norm(got - ref, axis=1) / np.linalg.norm(ref, axis=1)
    def nll(l):
        m = l.max(axis=1, keepdims=True); lse = np.log(np.exp(l - m).sum(axis=1)) + m[:, 0]
        return lse[:-1] - l[np.arange(len(l) - 1), tokens[1:]]
    d = nll(got) - nll(ref)
    return f"rel L2 mean {err.mean():.4f} max {err.max():.4f} | mean NLL shift {d.mean():+.5f} (|.| {np.abs(d).mean():.5f})"

def main():
    import llama_cpp
    text = open(TEXT, "rb").read()
    llm = llama_cpp.Llama(model_path=MODEL, n_ctx=512, n_batch=512, logits_all=True, verbose=False, n_threads=2)
    ids = llm.tokenize(text, add_bos=True, special=False)[:N]
    llm.eval(ids)
    lc = np.asarray(llm.scores[:N], dtype=np.float64)
    w = G.Weights(MODEL); types = {t.name: t.tensor_type for t in w.reader.tensors}
    tok = np.asarray(ids)
    ref = forward(w, types, ids, set())
    print("llama.cpp      ", stats_of(ref, lc, tok), flush=True)
    if TOOL:
        with tempfile.TemporaryDirectory() as tmp:
            for flag in ([], ["--q8-activations"]):
                out = os.path.join(tmp, "h.bin")
                subprocess.run([TOOL, *flag, MODEL, out, "2", ",".join(map(str, ids))], check=True)
                h = np.fromfile(out, dtype=np.float32).reshape(-1, ref.shape[1])[:N].astype(np.float64)
                print("hearth", flag or ["default"], stats_of(ref, h, tok), flush=True)
    for modes in (["q8"], ["kv16"], ["q8", "kv16", "q16"], ["q8qkv"], ["q8o"], ["q8gu"], ["q8down"], ["q8out"]):
        print("emulated", ",".join(modes).ljust(12), stats_of(ref, forward(w, types, ids, set(modes)), tok), flush=True)



def q8_refined(x, block, mode, thr, stats):
    """8-bit blocks with a second, residual block where `mode` says: "median"
    (scale > thr x the row's median scale), "crest" (max > thr x the block's
    RMS), "all", or "none"; the fraction refined goes to `stats`."""
    sh = x.shape
    xb = x.reshape(-1, sh[-1] // block, block)
    amax = np.abs(xb).max(axis=-1, keepdims=True)
    d = (amax / 127.0).astype(np.float32).astype(np.float64)
    inv = np.where(d > 0, 1.0 / np.where(d > 0, d, 1), 0)
    q = np.clip(np.round(xb * inv), -127, 127) * d
    if mode == "none":
        return q.reshape(sh)
    if mode == "median":
        sel = d > thr * np.median(d, axis=1, keepdims=True)
    elif mode == "crest":
        sel = amax > thr * np.sqrt(np.mean(xb * xb, axis=-1, keepdims=True))
    else:
        sel = np.ones_like(d, dtype=bool)
    r = xb - q
    rd = (np.abs(r).max(axis=-1, keepdims=True) / 127.0).astype(np.float32).astype(np.float64)
    rinv = np.where(rd > 0, 1.0 / np.where(rd > 0, rd, 1), 0)
    stats.append(sel.mean())
    return (q + np.where(sel, np.clip(np.round(r * rinv), -127, 127) * rd, 0)).reshape(sh)


def down_criteria(n_tokens):
    """The down projection's input alone in 8-bit blocks, refined by each criterion."""
    global q8
    import llama_cpp
    llm = llama_cpp.Llama(model_path=MODEL, vocab_only=True, verbose=False)
    ids = llm.tokenize(open(TEXT, "rb").read(), add_bos=True, special=False)[:n_tokens]
    w = G.Weights(MODEL)
    types = {t.name: t.tensor_type for t in w.reader.tensors}
    tok = np.asarray(ids)
    ref = forward(w, types, ids, set())
    plain = q8
    for mode, thr in (("none", 0), ("median", 4.0), ("crest", 8.0), ("crest", 6.0), ("crest", 5.0), ("all", 0)):
        stats = []
        q8 = lambda x, block: q8_refined(x, block, mode, thr, stats) if x.shape[-1] == 2048 else plain(x, block)
        got = forward(w, types, ids, {"q8down"})
        q8 = plain
        print(f"down {mode:6} {thr:4}: refined {100 * np.mean(stats):5.1f}% of blocks  ", stats_of(ref, got, tok),
              flush=True)


if __name__ == '__main__':
    if "--down-criteria" in sys.argv:
        down_criteria(N)
    else:
        main()
