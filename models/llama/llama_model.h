// The llama family's forward pass on the CPU (llama, SmolLM2, qwen2).
//
// One step runs the new tokens of every sequence together through each layer:
// the weight matrices are read once per step whatever the number of tokens
// (batched matrix products), then attention runs per sequence over its paged
// K/V. K and V are stored in f16, per layer [block][token][kv_head][head_dim].
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/backend/cpu/cpu_ops.h"
#include "engine/gguf/gguf_file.h"
#include "engine/model/model.h"
#include "models/llama/llama_weights.h"

namespace hearth::models {

struct LlamaOptions {
  int n_threads = 0;  // 0: the number of cores
  // Outlier refinement of the 8-bit activation blocks (kernels/cpu/
  // outlier_refine.h). false: plain 8-bit blocks, as llama.cpp computes.
  bool refine_activations = true;
};

class LlamaModel final : public Model {
 public:
  // Takes ownership of the file (the weights stay in its mapping).
  static Result<std::unique_ptr<LlamaModel>> load(std::unique_ptr<gguf::GgufFile> file, const LlamaOptions& options);

  const ModelHyperParams& hparams() const override { return w_.hp; }
  std::size_t kv_block_bytes(std::int32_t block_size) const override;
  Result<void> allocate_kv(const KvLayout& layout) override;
  Result<void> forward(std::span<const SequenceStep> steps, std::span<float> logits) override;
  ModelMemory memory() const override;
  std::span<const double> last_layer_ms() const override { return layer_ms_; }

 private:
  LlamaModel(std::unique_ptr<gguf::GgufFile> file, LlamaWeights weights, int n_threads, bool refine_activations);

  // Scratch for a step of n_tokens tokens (grown on demand, kept between steps).
  struct Workspace {
    std::vector<float> x, h, q, k, v, attn, gate, up;  // [n_tokens][width]
    std::vector<std::int32_t> positions;               // [n_tokens]
    std::vector<cpu::CpuOps::AttentionSeq> attention;  // [n_sequences] of the step
    std::size_t bytes() const;
  };

  Result<void> check_steps(std::span<const SequenceStep> steps, std::size_t logits_size) const;
  void attention_layer(std::uint32_t layer, std::span<const SequenceStep> steps);
  void ffn_layer(std::uint32_t layer, std::int64_t n_tokens);

  std::unique_ptr<gguf::GgufFile> file_;
  LlamaWeights w_;
  cpu::CpuOps ops_;
  KvLayout kv_layout_;
  std::vector<std::uint16_t> k_cache_, v_cache_;  // [layer][block][token][kv_head][head_dim] f16
  Workspace ws_;
  // [n_layer] ms of the last successful forward (steady_clock around each
  // layer: two clock reads per layer, negligible next to its matmuls); empty
  // after a failed one.
  std::vector<double> layer_ms_;
};

}  // namespace hearth::models
