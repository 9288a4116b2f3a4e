// Synthetic llama-family GGUF models: real shapes, random weights. They exist
// so speed can be measured at realistic sizes (an 8B-shape model) where no real
// file of that size is at hand; their text is gibberish by design.
//
// Quantized blocks hold finite, sensibly sized scales (weights of standard
// deviation about 1/sqrt(fan-in), so activations stay bounded through the
// layers) and uniformly random quants (never all zeros). The vocabulary is
// synthetic: the 256 byte tokens of GPT-2's byte-level BPE, three ChatML
// special tokens, then filler tokens; the chat template is ChatML.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/gguf/ggml_types.h"
#include "hearth/result.h"

namespace hearth::models {

struct SyntheticShape {
  std::string name;          // "smollm2-135m", "llama-1b", "llama-8b", "qwen2-7b", or "custom"
  std::uint32_t n_embd = 0;  // hidden width
  std::uint32_t n_layer = 0;
  std::uint32_t n_head = 0;
  std::uint32_t n_head_kv = 0;
  std::uint32_t n_ff = 0;  // feed-forward width
  std::uint32_t n_vocab = 0;
  std::uint32_t n_ctx = 0;  // trained context length (tokens)
  float rope_base = 10000.0f;
  float rms_eps = 1e-5f;
  bool tied_embeddings = false;        // no output.weight: logits reuse token_embd
  std::string architecture = "llama";  // or "qwen2": NeoX RoPE and Q/K/V biases
};

// The named shapes, in the order `hearth-cli synth --help` lists them.
const std::vector<SyntheticShape>& synthetic_shapes();
const SyntheticShape* find_synthetic_shape(std::string_view name);

// What to quantize to: a single ggml type, or the "Q4_K_M" mixture (Q4_K with
// Q6_K for the output matrix and for attn_v / ffn_down in the first and last
// eighth of the layers and every third layer between). Where a row length is
// not a multiple of 256, K-types fall back as llama.cpp does (Q4_K -> Q5_0,
// Q5_K -> Q5_1, Q6_K -> Q8_0).
struct SyntheticQuant {
  std::string name;  // as given on the command line, e.g. "Q4_0" or "Q4_K_M"
  gguf::GgmlType base = gguf::GgmlType::kQ4_0;
  bool k_mixture = false;
};
Result<SyntheticQuant> parse_synthetic_quant(std::string_view name);

struct SyntheticSpec {
  SyntheticShape shape;
  SyntheticQuant quant;
  std::uint64_t seed = 1;
  // Every weight matrix of layer `boosted_layer` (-1: none) gets `boost`
  // times the usual spread: a model whose activations blow up at that layer,
  // for the overflow check's tests (quantized types scale their block scales,
  // which stay f16: keep sigma x boost well under 65504).
  std::int32_t boosted_layer = -1;
  float boost = 1.0f;
};

// Checks the shape (heads divide the width, KV heads divide heads, sizes > 0
// and small enough to be plausible), then writes the file atomically.
Result<void> write_synthetic_model(const SyntheticSpec& spec, const std::filesystem::path& path);

// The type a weight gets under `quant` (exposed for tests). `layer` is -1 for
// tensors outside the layers.
gguf::GgmlType synthetic_tensor_type(const SyntheticSpec& spec, std::string_view role, int layer,
                                     std::uint64_t row_elems);

}  // namespace hearth::models
