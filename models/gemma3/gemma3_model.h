// Gemma 3's forward pass, written once over the backend op interface
// (engine/backend/ops.h) and run on whichever backend it was loaded on (the
// CPU, or CUDA through load_on with a CudaBackend). gemma3_weights.h lists
// what sets the architecture apart from the llama family.
//
// Sliding-window layers read only the last `window` positions of the paged KV
// cache (a window mask in attention); their blocks stay allocated for the
// whole sequence, like the global layers' (simple and prefix-cache friendly;
// recycling the blocks that fell out of every local window is a later saving
// of up to 5/6 of the pool on long contexts).
#pragma once

#include <cstdint>
#include <memory>

#include "engine/backend/ops.h"
#include "engine/gguf/gguf_file.h"
#include "engine/model/model.h"
#include "models/gemma3/gemma3_weights.h"

namespace hearth::models {

class Gemma3Model final : public Model {
 public:
  // On `ops` (a fresh backend); keep_file: the backend computes from the file
  // mapping (CPU), so the model keeps the file; otherwise it is released once
  // the weights are uploaded.
  static Result<std::unique_ptr<Gemma3Model>> load_on(std::unique_ptr<backend::Ops> ops,
                                                      std::unique_ptr<gguf::GgufFile> file, bool keep_file);
  ~Gemma3Model() override;

  const ModelHyperParams& hparams() const override { return w_.p.hp; }
  const Gemma3Params& params() const { return w_.p; }
  std::size_t kv_block_bytes(std::int32_t block_size) const override;
  Result<void> allocate_kv(const KvLayout& layout) override;
  Result<void> forward(std::span<const SequenceStep> steps, std::span<float> logits) override;
  ModelMemory memory() const override;
  std::span<const double> last_layer_ms() const override;

  backend::Ops& ops() { return *ops_; }
  backend::Ops* backend_ops() override { return ops_.get(); }

 private:
  explicit Gemma3Model(std::unique_ptr<backend::Ops> ops);

  // Activation buffers of a step, [n_tokens][width] each.
  struct Acts {
    backend::ActivationId x, h;      // [n_embd]: the residual stream, normed / scratch
    backend::ActivationId q, attn;   // [n_head * head_dim]
    backend::ActivationId k, v;      // [n_head_kv * head_dim]
    backend::ActivationId gate, up;  // [n_ff]
  };

  void declare_activations();
  void attention_block(std::int32_t layer);
  void ffn_block(std::int32_t layer);
  void soft_cap(std::span<float> logits) const;

  std::unique_ptr<backend::Ops> ops_;
  std::unique_ptr<gguf::GgufFile> file_;  // the mapping the CPU backend reads; null on CUDA
  Gemma3Weights w_;
  Acts a_{};
  KvLayout kv_layout_;
  bool last_step_ok_ = false;
};

}  // namespace hearth::models
