// Gemma 3's hyper-parameters and weights, read from a GGUF and checked before
// anything runs (every tensor present, of a type the kernels compute and of
// exactly the expected shape; a mismatch names the tensor), then uploaded
// once to the backend the model runs on.
//
// What sets gemma3 apart from the llama family (REFERENCE.md, and llama.cpp's
// gemma3 graph for the defaults of keys the converter does not write):
// - head_dim is attention.key_length (256 for 270M), not n_embd / n_head, so
//   q is [n_head * head_dim] = 1024 wide while the residual stream is 640;
// - per-head RMSNorm of Q and K (attn_q_norm / attn_k_norm, [head_dim]) before
//   NeoX RoPE, and RMSNorm after attention and after the FFN;
// - local layers (sliding window attention.sliding_window, RoPE base
//   rope.freq_base_swa, default 10000) and global ones (full causal attention,
//   rope.freq_base): layer l is global when (l + 1) % pattern == 0, pattern
//   attention.sliding_window_pattern, default 6 (5 local per global);
// - the norm weights as stored: Gemma computes x * (1 + w) and llama.cpp's
//   converter writes w + 1 into the GGUF, so the file's weights multiply
//   directly (checked against llama.cpp's perplexity, tests/peer);
// - queries scaled by attention.scale when present, else 1 / sqrt(head_dim)
//   (query_pre_attn_scalar = head_dim for the sizes this file format covers);
// - the embedding scaled by sqrt(n_embd); output tied to the embedding;
//   final_logit_softcapping applied when the file has it (270M: absent).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/backend/ops.h"
#include "engine/gguf/gguf_file.h"
#include "engine/model/model.h"
#include "hearth/result.h"
#include "models/decoder_model.h"
#include "models/tensor_bind.h"

namespace hearth::models {

struct Gemma3Params {
  ModelHyperParams hp;           // head_dim = key_length; rope_base = the global layers' base
  float rope_base_local = 1e4f;  // RoPE base of the sliding-window layers
  std::int32_t window = 0;       // tokens a local layer's query sees, its own included
  std::vector<bool> local;       // [n_layer]: sliding window and local RoPE base
  float attn_scale = 0.0f;       // applied to q.k
  float embd_scale = 0.0f;       // sqrt(n_embd)
  float logit_softcap = 0.0f;    // 0: none; else logits = cap * tanh(logits / cap)
};

// hd = head_dim; matrices are [rows][cols] (GGUF ne = [cols, rows]).
template <typename Mat, typename Vec>
struct Gemma3LayerWeightsOf {
  Vec attn_norm;             // [n_embd] f32
  Mat wq, wk, wv, wo;        // [n_head*hd][n_embd], [n_kv*hd][n_embd] x2, [n_embd][n_head*hd]
  Vec q_norm, k_norm;        // [hd] f32, per head
  Vec post_attn_norm;        // [n_embd] f32
  Vec ffn_norm;              // [n_embd] f32
  Mat w_gate, w_up, w_down;  // [n_ff][n_embd] x2, [n_embd][n_ff]
  Vec post_ffn_norm;         // [n_embd] f32
};

template <typename Mat, typename Vec>
struct Gemma3WeightsOf : DecoderGlobalsOf<Mat, Vec> {
  Gemma3Params p;
  std::vector<Gemma3LayerWeightsOf<Mat, Vec>> layers;  // [n_layer]
};

using Gemma3LayerFileWeights = Gemma3LayerWeightsOf<WeightRef, WeightRef>;
using Gemma3FileWeights = Gemma3WeightsOf<WeightRef, WeightRef>;
using Gemma3Weights = Gemma3WeightsOf<backend::Matrix, backend::Vector>;

Result<Gemma3Params> read_gemma3_params(const gguf::GgufFile& file);
Result<Gemma3FileWeights> bind_gemma3_weights(const gguf::GgufFile& file);
// Bytes of the tensors the forward pass reads (the tied output once).
std::size_t gemma3_weight_bytes(const Gemma3FileWeights& w);
Result<Gemma3Weights> upload_gemma3_weights(const Gemma3FileWeights& w, backend::Ops& ops);

}  // namespace hearth::models
