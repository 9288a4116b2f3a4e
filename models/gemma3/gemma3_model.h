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
#include "models/decoder_model.h"
#include "models/gemma3/gemma3_weights.h"

namespace hearth::models {

class Gemma3Model final : public DecoderModel {
 public:
  // On `ops` (a fresh backend); keep_file: the backend computes from the file
  // mapping (CPU), so the model keeps the file; otherwise it is released once
  // the weights are uploaded.
  static Result<std::unique_ptr<Gemma3Model>> load_on(std::unique_ptr<backend::Ops> ops,
                                                      std::unique_ptr<gguf::GgufFile> file, bool keep_file);
  ~Gemma3Model() override;

  const ModelHyperParams& hparams() const override { return w_.p.hp; }
  const Gemma3Params& params() const { return w_.p; }

 private:
  explicit Gemma3Model(std::unique_ptr<backend::Ops> ops);

  const DecoderGlobals& globals() const override { return w_; }
  void after_embed() override;
  void run_layer(std::int32_t layer) override;
  void after_logits(std::span<float> logits) const override;
  void attention_block(std::int32_t layer);
  void ffn_block(std::int32_t layer);

  Gemma3Weights w_;
};

}  // namespace hearth::models
