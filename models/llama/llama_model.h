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

#include "engine/backend/ops.h"
#include "engine/gguf/gguf_file.h"
#include "kernels/kv_precision.h"
#include "models/decoder_model.h"
#include "models/llama/llama_weights.h"

namespace hearth::models {

struct LlamaOptions {
  int n_threads = 0;  // 0: the number of cores
  // Outlier refinement of the 8-bit activation blocks (kernels/cpu/
  // outlier_refine.h). false: plain 8-bit blocks, as llama.cpp computes.
  bool refine_activations = true;
  KvPrecision kv_precision = KvPrecision::kF16;  // f16 or q8_0 on the CPU
};

class LlamaModel : public DecoderModel {
 public:
  // On the CPU; takes ownership of the file (the weights stay in its mapping).
  static Result<std::unique_ptr<LlamaModel>> load(std::unique_ptr<gguf::GgufFile> file, const LlamaOptions& options);
  ~LlamaModel() override;

  const ModelHyperParams& hparams() const override { return w_.hp; }

 protected:
  explicit LlamaModel(std::unique_ptr<backend::Ops> ops);
  // Checks and binds the file's tensors and uploads them to the backend.
  // keep: the backend computes from the mapping (CPU), so the file lives
  // as long as the model; otherwise it is released once the weights are uploaded.
  Result<void> init(std::unique_ptr<gguf::GgufFile> file, bool keep);

 private:
  const DecoderGlobals& globals() const override { return w_; }
  void run_layer(std::int32_t layer) override;
  void attention_block(std::int32_t layer);
  void ffn_block(std::int32_t layer);

  LlamaWeights w_;
};

}  // namespace hearth::models
