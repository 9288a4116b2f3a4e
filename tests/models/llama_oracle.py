#!/usr/bin/env python3
"""Independent reference forward pass of llama-family GGUF models (test oracle).

Weights are dequantized by the `gguf` package's own quants code; the forward
pass is plain float64 numpy written from the architecture's definition, sharing
nothing with Hearth's C++. Supports llama (adjacent-pair RoPE, as GGUF
converters permute Q/K for it), qwen2 (NeoX RoPE, Q/K/V biases), tied or untied
output.

Usage: llama_oracle.py MODEL.gguf --tokens 1,2,3 [--tokens ...] --out logits.npy
Writes an array [n_prompts][n_tokens][n_vocab] (float32) of every position's logits.
"""
import argparse

import gguf
import numpy as np


class Weights:
    def __init__(self, path):
        self.reader = gguf.GGUFReader(path)
        self.fields = self.reader.fields
        self.tensors = {t.name: t for t in self.reader.tensors}
        self.cache = {}

    def meta(self, key, default=None):
        f = self.fields.get(key)
        return default if f is None else f.contents()

    def get(self, name):
        if name not in self.cache:
            t = self.tensors[name]
            w = gguf.quants.dequantize(t.data, t.tensor_type)
            # gguf-py gives [ne1][ne0] for 2-D: rows are output features.
            self.cache[name] = np.asarray(w, dtype=np.float64).reshape([int(x) for x in reversed(t.shape)])
        return self.cache[name]

    def has(self, name):
        return name in self.tensors


def rms_norm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def rope(x, positions, base, neox):
    # x: [n_tok][n_head][head_dim]
    d = x.shape[-1]
    inv = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)  # [d/2]
    ang = positions[:, None].astype(np.float64) * inv[None, :]  # [n_tok][d/2]
    cos, sin = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
    if neox:
        a, b = x[..., : d // 2], x[..., d // 2:]
        return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)
    a, b = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = a * cos - b * sin
    out[..., 1::2] = a * sin + b * cos
    return out


def forward(w, tokens):
    arch = w.meta("general.architecture")
    p = arch + "."
    n_layer = int(w.meta(p + "block_count"))
    n_head = int(w.meta(p + "attention.head_count"))
    n_kv = int(w.meta(p + "attention.head_count_kv", n_head))
    eps = float(w.meta(p + "attention.layer_norm_rms_epsilon"))
    base = float(w.meta(p + "rope.freq_base", 10000.0))
    neox = arch in ("qwen2", "gemma3")
    emb = w.get("token_embd.weight")
    x = emb[np.asarray(tokens)]  # [n_tok][n_embd]
    n_tok, n_embd = x.shape
    hd = n_embd // n_head
    pos = np.arange(n_tok)
    mask = np.triu(np.full((n_tok, n_tok), -np.inf), k=1)
    for i in range(n_layer):
        b = f"blk.{i}."
        h = rms_norm(x, w.get(b + "attn_norm.weight"), eps)
        q = h @ w.get(b + "attn_q.weight").T
        k = h @ w.get(b + "attn_k.weight").T
        v = h @ w.get(b + "attn_v.weight").T
        for name, arr in (("q", q), ("k", k), ("v", v)):
            if w.has(b + f"attn_{name}.bias"):
                arr += w.get(b + f"attn_{name}.bias")
        q = rope(q.reshape(n_tok, n_head, hd), pos, base, neox)
        k = rope(k.reshape(n_tok, n_kv, hd), pos, base, neox)
        v = v.reshape(n_tok, n_kv, hd)
        group = n_head // n_kv
        out = np.empty((n_tok, n_head, hd))
        for hh in range(n_head):
            s = q[:, hh, :] @ k[:, hh // group, :].T / np.sqrt(hd) + mask
            s = np.exp(s - s.max(axis=-1, keepdims=True))
            s /= s.sum(axis=-1, keepdims=True)
            out[:, hh, :] = s @ v[:, hh // group, :]
        x = x + out.reshape(n_tok, n_embd) @ w.get(b + "attn_output.weight").T
        h = rms_norm(x, w.get(b + "ffn_norm.weight"), eps)
        g = h @ w.get(b + "ffn_gate.weight").T
        u = h @ w.get(b + "ffn_up.weight").T
        x = x + (g / (1.0 + np.exp(-g)) * u) @ w.get(b + "ffn_down.weight").T
    x = rms_norm(x, w.get("output_norm.weight"), eps)
    out_w = w.get("output.weight") if w.has("output.weight") else emb
    return x @ out_w.T


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--tokens", action="append", required=True, help="comma-separated token ids")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    w = Weights(args.model)
    prompts = [[int(t) for t in s.split(",")] for s in args.tokens]
    n = max(len(p) for p in prompts)
    result = np.full((len(prompts), n, w.get("token_embd.weight").shape[0]), np.nan, dtype=np.float32)
    for i, p in enumerate(prompts):
        result[i, : len(p)] = forward(w, p)
    np.save(args.out, result)


if __name__ == "__main__":
    main()
