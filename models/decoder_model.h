// What every decoder-only architecture here (the llama family, gemma3) shares
// whatever its layers look like: the global tensors (embedding, final norm,
// output matrix, possibly tied), the activation buffers of a step, the KV
// cache and memory accounting that the backend owns, and the shape of one
// forward step (embed, the layers, the logits). An architecture supplies its
// layer (DecoderModel::run_layer) and whatever it does around the embedding
// and the logits; it is written once over backend::Ops and runs on any backend.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "engine/backend/ops.h"
#include "engine/gguf/gguf_file.h"
#include "engine/model/model.h"
#include "hearth/result.h"
#include "models/tensor_bind.h"

namespace hearth::models {

// Mat/Vec are WeightRef while bound to the file, backend::Matrix /
// backend::Vector once uploaded. An architecture's weight struct derives from it.
template <typename Mat, typename Vec>
struct DecoderGlobalsOf {
  Mat token_embd;     // [n_vocab][n_embd]
  Vec output_norm;    // [n_embd] f32
  Mat output;         // [n_vocab][n_embd]; token_embd when tied
  bool tied = false;  // no output.weight in the file (SmolLM2, Gemma 3): output is token_embd
};
using DecoderFileGlobals = DecoderGlobalsOf<WeightRef, WeightRef>;
using DecoderGlobals = DecoderGlobalsOf<backend::Matrix, backend::Vector>;

// Binds token_embd, output_norm and the optional output.weight (checked shapes).
Result<DecoderFileGlobals> bind_decoder_globals(const gguf::GgufFile& file, const ModelHyperParams& hp);
// Their bytes, the tied output counted once.
std::size_t decoder_globals_bytes(const DecoderFileGlobals& g);
// Uploads them (a tied output once) and makes the output matrix the backend's logits matrix.
Result<DecoderGlobals> upload_decoder_globals(const DecoderFileGlobals& g, backend::Ops& ops);

// A step's activation buffers, [n_tokens][width] each (backend::Ops::act).
struct DecoderActs {
  backend::ActivationId x, h;      // [n_embd]: the residual stream, normed / scratch
  backend::ActivationId q, attn;   // [n_head * head_dim]
  backend::ActivationId k, v;      // [n_head_kv * head_dim]
  backend::ActivationId gate, up;  // [n_ff]
};

class DecoderModel : public Model {
 public:
  ~DecoderModel() override;

  std::size_t kv_block_bytes(std::int32_t block_size) const final;
  Result<void> allocate_kv(const KvLayout& layout) final;
  // Checks the steps, then embed -> after_embed -> run_layer for each layer ->
  // final norm and logits -> after_logits, on the backend.
  Result<void> forward(std::span<const SequenceStep> steps, std::span<float> logits) final;
  ModelMemory memory() const final;
  std::span<const double> last_layer_ms() const final;

  // The backend the model runs on (its op observer, for a profiler).
  backend::Ops& ops() { return *ops_; }
  backend::Ops* backend_ops() override { return ops_.get(); }

 protected:
  explicit DecoderModel(std::unique_ptr<backend::Ops> ops);

  // Gives the backend the model's shape and declares the activation buffers
  // (before the weights are uploaded: the backend sizes its KV from the shape).
  Result<void> set_shape(const ModelHyperParams& hp);
  void declare_activations(const ModelHyperParams& hp);
  // keep: the backend computes from the file mapping (CPU), so the model keeps
  // the file; otherwise it is released once the weights are uploaded.
  void keep_file(std::unique_ptr<gguf::GgufFile> file) { file_ = std::move(file); }

  virtual const DecoderGlobals& globals() const = 0;
  virtual void after_embed() {}
  virtual void run_layer(std::int32_t layer) = 0;
  virtual void after_logits(std::span<float> /*logits*/) const {}

  const DecoderActs& acts() const { return a_; }

 private:
  std::unique_ptr<backend::Ops> ops_;     // destroyed after the model's use of it
  std::unique_ptr<gguf::GgufFile> file_;  // the mapping the CPU backend reads; null on CUDA
  DecoderActs a_{};
  KvLayout kv_layout_;
  bool last_step_ok_ = false;  // last_layer_ms() is empty after a failed step
};

}  // namespace hearth::models
