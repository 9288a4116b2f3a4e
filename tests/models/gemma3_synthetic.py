#!/ usr / bin / env python3
"""A tiny random Gemma 3 GGUF with F32 weights, written with the `gguf`
package (not Hearth's synth), for the logits oracle: with float weights only
the f16 KV cache separates Hearth from the float64 reference, so every piece
of the architecture (scaled embedding, per-head Q/K norms, post-norms, GeGLU,
local/global RoPE bases, the sliding window, the layer pattern, head_dim !=
n_embd / n_head) is checked to ~1e-3.

Shapes: 48 wide, 5 layers, 2 heads of 32 (q is 64 wide), 1 KV head, FFN 96,
vocab 300; window 6 and pattern 3 (layers 2 of 5 global... layer l global when
(l + 1) % 3 == 0: layers 2), RoPE bases 1e6 global, 5e3 local (non-default,
so a reader that ignored the key would fail).
"""
import sys

import gguf
import numpy as np

SHAPE = dict(n_embd=48, n_layer=5, n_head=2, n_kv=1, head_dim=32, n_ff=96, n_vocab=300, window=6, pattern=3)


def write(path, seed=7):
    s = SHAPE
    rng = np.random.default_rng(seed)
    w = gguf.GGUFWriter(path, "gemma3")
    w.add_name("synthetic gemma3")
    w.add_context_length(256)
    w.add_embedding_length(s["n_embd"])
    w.add_block_count(s["n_layer"])
    w.add_feed_forward_length(s["n_ff"])
    w.add_head_count(s["n_head"])
    w.add_head_count_kv(s["n_kv"])
    w.add_key_length(s["head_dim"])
    w.add_value_length(s["head_dim"])
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_freq_base(1e6)
    w.add_float32("gemma3.rope.freq_base_swa", 5e3)
    w.add_uint32("gemma3.attention.sliding_window", s["window"])
    w.add_uint32("gemma3.attention.sliding_window_pattern", s["pattern"])
    w.add_tokenizer_model("llama")
    specials = ["<pad>", "<eos>", "<bos>", "<unk>"]
    tokens = specials + [f"\u2581t{i}" for i in range(s["n_vocab"] - len(specials))]
    w.add_token_list(tokens)
    w.add_token_scores([0.0] * len(specials) + [-float(i) for i in range(len(tokens) - len(specials))])
    w.add_token_types([3] * len(specials) + [1] * (len(tokens) - len(specials)))
    w.add_bos_token_id(2)
    w.add_eos_token_id(1)
    w.add_unk_token_id(3)
    w.add_pad_token_id(0)

    def mat(rows, cols):
        return (rng.standard_normal((rows, cols)) / np.sqrt(cols)).astype(np.float32)

    def norm(n):
        return (1.0 + 0.3 * rng.standard_normal(n)).astype(np.float32)

    e, hd, q, kv, ff = s["n_embd"], s["head_dim"], s["n_head"] * s["head_dim"], s["n_kv"] * s["head_dim"], s["n_ff"]
    w.add_tensor("token_embd.weight", (rng.standard_normal((s["n_vocab"], e)) * 0.1).astype(np.float32))
    w.add_tensor("output_norm.weight", norm(e))
    for il in range(s["n_layer"]):
        b = f"blk.{il}."
        for name, t in [("attn_norm", norm(e)), ("attn_q", mat(q, e)), ("attn_k", mat(kv, e)), ("attn_v", mat(kv, e)),
                        ("attn_output", mat(e, q)), ("attn_q_norm", norm(hd)), ("attn_k_norm", norm(hd)),
                        ("post_attention_norm", norm(e)), ("ffn_norm", norm(e)), ("ffn_gate", mat(ff, e)),
                        ("ffn_up", mat(ff, e)), ("ffn_down", mat(e, ff)), ("post_ffw_norm", norm(e))]:
            w.add_tensor(b + name + ".weight", t)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    write(sys.argv[1])
