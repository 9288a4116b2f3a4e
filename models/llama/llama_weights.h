// The llama family's hyper-parameters and weights, read from a GGUF and
// checked before anything runs: every tensor the architecture needs must be
// present, of a type the kernels compute, and of exactly the expected shape;
// a mismatch is an error naming the tensor. Then uploaded once to the backend
// the model runs on (the CPU keeps them in the file mapping, no copies).
//
// Covers: llama (adjacent-pair RoPE), SmolLM2 (llama with tied embeddings),
// qwen2 (NeoX RoPE, Q/K/V biases).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "engine/backend/ops.h"
#include "engine/gguf/gguf_file.h"
#include "engine/model/model.h"
#include "hearth/result.h"
#include "models/decoder_model.h"
#include "models/tensor_bind.h"

namespace hearth::models {

// The llama family's weights, one struct for the file and every backend:
// Mat/Vec are WeightRef while bound to the file (checked, in its mapping),
// backend::Matrix / backend::Vector once uploaded (LlamaWeights).
// hd = head_dim; matrices are [rows][cols] (GGUF ne = [cols, rows]).
template <typename Mat, typename Vec>
struct LlamaLayerWeightsOf {
  Vec attn_norm;             // [n_embd] f32
  Mat wq, wk, wv, wo;        // [n_head*hd][n_embd], [n_kv*hd][n_embd] x2, [n_embd][n_head*hd]
  Vec bq, bk, bv;            // qwen2 only: [n_head*hd], [n_kv*hd] x2 f32; empty otherwise
  Vec ffn_norm;              // [n_embd] f32
  Mat w_gate, w_up, w_down;  // [n_ff][n_embd] x2, [n_embd][n_ff]
};

template <typename Mat, typename Vec>
struct LlamaWeightsOf : DecoderGlobalsOf<Mat, Vec> {
  ModelHyperParams hp;
  std::vector<LlamaLayerWeightsOf<Mat, Vec>> layers;  // [n_layer]
};

using LlamaLayerWeights = LlamaLayerWeightsOf<WeightRef, WeightRef>;
using LlamaFileWeights = LlamaWeightsOf<WeightRef, WeightRef>;
using LlamaWeights = LlamaWeightsOf<backend::Matrix, backend::Vector>;

// Architectures this loader handles.
bool is_llama_family(std::string_view architecture);

Result<ModelHyperParams> read_llama_hparams(const gguf::GgufFile& file);
Result<LlamaFileWeights> bind_llama_weights(const gguf::GgufFile& file);

// Bytes of the tensors the forward pass reads (the tied output once).
std::size_t llama_weight_bytes(const LlamaFileWeights& w);

// Uploads every tensor to `ops` (after reserve_weights of their bytes) and
// returns the backend's handles; kOutOfMemory / kUnsupported name the tensor.
Result<LlamaWeights> upload_llama_weights(const LlamaFileWeights& w, backend::Ops& ops);

}  // namespace hearth::models
