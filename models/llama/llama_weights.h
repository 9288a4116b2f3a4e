// The llama family's hyper-parameters and weights, read from a GGUF and
// checked before anything runs: every tensor the architecture needs must be
// present, of a type the kernels compute, and of exactly the expected shape;
// a mismatch is an error naming the tensor. Weights stay in the file mapping
// (no copies on the CPU path).
//
// Covers: llama (adjacent-pair RoPE), SmolLM2 (llama with tied embeddings),
// qwen2 (NeoX RoPE, Q/K/V biases).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/model/model.h"
#include "hearth/result.h"

namespace hearth::models {

// A weight matrix [rows][cols] (GGUF ne = [cols, rows]) or vector [cols].
struct WeightRef {
  const gguf::TensorInfo* info = nullptr;  // null for an absent optional tensor
  std::uint32_t type = 0;                  // ggml type id
  std::int64_t rows = 1;                   // output features
  std::int64_t cols = 0;                   // input features (contiguous)
  const void* data = nullptr;

  explicit operator bool() const { return info != nullptr; }
};

struct LlamaLayerWeights {
  WeightRef attn_norm;             // [n_embd] f32
  WeightRef wq, wk, wv, wo;        // [n_head*hd][n_embd], [n_kv*hd][n_embd] x2, [n_embd][n_head*hd]
  WeightRef bq, bk, bv;            // qwen2 only: [n_head*hd], [n_kv*hd] x2 f32
  WeightRef ffn_norm;              // [n_embd] f32
  WeightRef w_gate, w_up, w_down;  // [n_ff][n_embd] x2, [n_embd][n_ff]
};

struct LlamaWeights {
  ModelHyperParams hp;
  WeightRef token_embd;   // [n_vocab][n_embd]
  WeightRef output_norm;  // [n_embd] f32
  WeightRef output;       // [n_vocab][n_embd]; token_embd when tied
  std::vector<LlamaLayerWeights> layers;
  std::size_t weight_bytes = 0;  // all tensors used
};

// Architectures this loader handles.
bool is_llama_family(std::string_view architecture);

Result<ModelHyperParams> read_llama_hparams(const gguf::GgufFile& file);
Result<LlamaWeights> bind_llama_weights(const gguf::GgufFile& file);

}  // namespace hearth::models
