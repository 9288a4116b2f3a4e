#!/ usr / bin / env python3
"""Independent reference forward pass of Gemma 3 GGUF models (test oracle).

Weights dequantized by the `gguf` package's own quants code; the forward pass
is plain float64 numpy written from the architecture's definition (Gemma 3
paper / HF modeling_gemma3, with llama.cpp's defaults for keys its converter
does not write), sharing nothing with Hearth's C++:

  x = embed(tokens) * sqrt(n_embd)
per layer : h = rms(x) * attn_norm;
q, k, v = h Wq, h Wk, h Wv q, k = rms per head * q_norm / k_norm;
NeoX RoPE(local layers base rope.freq_base_swa(default 1e4), global rope.freq_base) attention scaled by 1 /
    sqrt(head_dim),
    causal;
local layers see only the last `sliding_window` positions(their own included) x +=
    rms(attn Wo) * post_attention_norm h = rms(x) * ffn_norm; x += rms((gelu_tanh(h Wg) * h Wu) Wd) * post_ffw_norm
  logits = rms(x) * output_norm @ token_embd^T (tied)

Layer l is global when (l + 1) % pattern == 0, pattern = attention.sliding_window_pattern,
default 6 (5 local layers per global). The
norm weights are used as stored: llama.cpp's converter writes Gemma's (1 + w)
into the file.
"""
import gguf
import numpy as np

import llama_oracle

PATTERN = 6  # default of attention.sliding_window_pattern (llama.cpp: 5 local per global)


def rms(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


class Weights(llama_oracle.Weights):
    def embedding(self):
        """token_embd as float32 (float64 would take 1.3 GB for 262144 x 640)."""
        if "emb32" not in self.cache:
            t = self.tensors["token_embd.weight"]
            w = gguf.quants.dequantize(t.data, t.tensor_type)
            self.cache["emb32"] = np.asarray(w, dtype=np.float32).reshape([int(x) for x in reversed(t.shape)])
        return self.cache["emb32"]


def attention(q, k, v, window, scale):
    """q [n][H][d], k/v [n][KV][d]: causal (window > 0: last `window` positions)."""
    n, n_head, _ = q.shape
    group = n_head // k.shape[1]
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    visible = j <= i
    if window > 0:
        visible &= i - j < window
    mask = np.where(visible, 0.0, -np.inf)
    out = np.empty_like(q)
    for h in range(n_head):
        s = q[:, h, :] @ k[:, h // group, :].T * scale + mask
        s = np.exp(s - s.max(axis=-1, keepdims=True))
        s /= s.sum(axis=-1, keepdims=True)
        out[:, h, :] = s @ v[:, h // group, :]
    return out


def forward(w, tokens, rows=None):
    """Logits [len(rows)][n_vocab] of positions `rows` (default: all)."""
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
    pattern = int(w.meta(p + "attention.sliding_window_pattern", PATTERN))
    emb = w.embedding()
    x = emb[np.asarray(tokens)].astype(np.float64) * np.sqrt(np.float64(n_embd))
    n = len(tokens)
    pos = np.arange(n)
    for il in range(n_layer):
        b = f"blk.{il}."
        local = (il + 1) % pattern != 0
        h = rms(x, w.get(b + "attn_norm.weight"), eps)
        q = (h @ w.get(b + "attn_q.weight").T).reshape(n, n_head, hd)
        k = (h @ w.get(b + "attn_k.weight").T).reshape(n, n_kv, hd)
        v = (h @ w.get(b + "attn_v.weight").T).reshape(n, n_kv, hd)
        q = rms(q, w.get(b + "attn_q_norm.weight"), eps)
        k = rms(k, w.get(b + "attn_k_norm.weight"), eps)
        base = base_local if local else base_global
        q = llama_oracle.rope(q, pos, base, True)
        k = llama_oracle.rope(k, pos, base, True)
        a = attention(q, k, v, window if local else 0, 1.0 / np.sqrt(hd)).reshape(n, n_head * hd)
        x = x + rms(a @ w.get(b + "attn_output.weight").T, w.get(b + "post_attention_norm.weight"), eps)
        h = rms(x, w.get(b + "ffn_norm.weight"), eps)
        g = gelu_tanh(h @ w.get(b + "ffn_gate.weight").T) * (h @ w.get(b + "ffn_up.weight").T)
        x = x + rms(g @ w.get(b + "ffn_down.weight").T, w.get(b + "post_ffw_norm.weight"), eps)
    x = rms(x, w.get("output_norm.weight"), eps)
    x = x if rows is None else x[rows]
    out = np.empty((x.shape[0], emb.shape[0]))
    for lo in range(0, emb.shape[0], 32768):  # float64 products of 32768 rows at a time
        out[:, lo:lo + 32768] = x @ emb[lo:lo + 32768].astype(np.float64).T
    return out
