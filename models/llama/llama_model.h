// The llama family's forward pass (llama, SmolLM2, qwen2), written once over
// the backend op interface (engine/backend/ops.h) and run on whichever
// backend it was loaded on: the CPU (load below) or CUDA (LlamaCudaModel).
//
// One step runs the new tokens of every sequence together through each layer:
// the weight matrices are read once per step whatever the number of tokens
// (batched matrix products), then attention runs over each sequence's paged
// K/V. The KV cache, [layer][block][token][kv_head][head_dim], belongs to the
// backend (f16 on the CPU; f16 or fp8 on CUDA).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/backend/ops.h"
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

class LlamaModel : public Model {
 public:
  // On the CPU; takes ownership of the file (the weights stay in its mapping).
  static Result<std::unique_ptr<LlamaModel>> load(std::unique_ptr<gguf::GgufFile> file, const LlamaOptions& options);
  ~LlamaModel() override;

  const ModelHyperParams& hparams() const override { return w_.hp; }
  std::size_t kv_block_bytes(std::int32_t block_size) const override;
  Result<void> allocate_kv(const KvLayout& layout) override;
  Result<void> forward(std::span<const SequenceStep> steps, std::span<float> logits) override;
  ModelMemory memory() const override;
  std::span<const double> last_layer_ms() const override;

  // The backend the model runs on (its op observer, for a profiler).
  backend::Ops& ops() { return *ops_; }
  backend::Ops* backend_ops() override { return ops_.get(); }

 protected:
  explicit LlamaModel(std::unique_ptr<backend::Ops> ops);
  // Checks and binds the file's tensors and uploads them to the backend.
  // keep_file: the backend computes from the mapping (CPU), so the file lives
  // as long as the model; otherwise it is released once the weights are uploaded.
  Result<void> init(std::unique_ptr<gguf::GgufFile> file, bool keep_file);

 private:
  // Activation buffers of a step, [n_tokens][width] each (backend::Ops::act).
  struct Acts {
    backend::ActivationId x, h;      // [n_embd]: the residual stream, normed / scratch
    backend::ActivationId q, attn;   // [n_head * head_dim]
    backend::ActivationId k, v;      // [n_head_kv * head_dim]
    backend::ActivationId gate, up;  // [n_ff]
  };

  void declare_activations();
  void attention_block(std::int32_t layer);
  void ffn_block(std::int32_t layer);

  std::unique_ptr<backend::Ops> ops_;     // destroyed after the model's use of it
  std::unique_ptr<gguf::GgufFile> file_;  // the mapping the CPU backend reads; null on CUDA
  LlamaWeights w_;
  Acts a_{};
  KvLayout kv_layout_;
  bool last_step_ok_ = false;  // last_layer_ms() is empty after a failed step
};

}  // namespace hearth::models
