// The interface through which the engine runs a model. models/ implements it
// for each architecture and hands an instance to the engine (dependency
// injection: the engine never looks an architecture up by name).
//
// A forward step takes new tokens of one or several sequences at once (prefill
// chunks and decode tokens share one code path), appends their K/V to the
// paged KV storage the model owns, and returns logits for the sequences that
// want them. Which blocks a sequence uses is decided outside (engine/kv): the
// model only reads and writes the blocks it is given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hearth/result.h"

namespace hearth {

namespace backend {
class Ops;
}

struct ModelHyperParams {
  std::string architecture;       // general.architecture: "llama", "qwen2", ...
  std::string name;               // general.name, for display
  std::uint32_t n_vocab = 0;      // tokens
  std::uint32_t n_ctx_train = 0;  // tokens the model was trained for
  std::uint32_t n_embd = 0;       // hidden width
  std::uint32_t n_layer = 0;
  std::uint32_t n_head = 0;
  std::uint32_t n_head_kv = 0;
  std::uint32_t head_dim = 0;
  std::uint32_t n_ff = 0;  // feed-forward width
  float rms_eps = 1e-5f;
  float rope_base = 10000.0f;
  float rope_scale = 1.0f;  // positions are multiplied by 1 / rope_scale (linear scaling)
  bool rope_neox = false;   // NeoX halves (qwen2, gemma) vs adjacent pairs (llama)
};

// One sequence's share of a forward step.
struct SequenceStep {
  std::span<const std::int32_t> tokens;       // new tokens: positions [start_pos, start_pos + size)
  std::int32_t start_pos = 0;                 // tokens of this sequence already in the KV cache
  std::span<const std::int32_t> block_table;  // KV blocks covering positions [0, start_pos + size)
  bool want_logits = true;                    // return the logits of the last new token
  bool all_logits = false;                    // with want_logits: of every new token (perplexity)
  // With want_logits (not all_logits): the caller needs only the arg-max of
  // the row (greedy, no penalties). When every such row of a step is greedy a
  // backend may return the arg-maxes (backend::Ops::greedy_tokens) instead
  // of the logits, which are then not written.
  bool greedy = false;
};

struct ModelMemory {
  std::size_t weights_bytes = 0;    // resident weight data (mapped or uploaded)
  std::size_t kv_bytes = 0;         // the KV block pool
  std::size_t workspace_bytes = 0;  // activations and scratch
  std::size_t device_free = 0;      // GPU models: free bytes on the whole device (all processes); 0 on the CPU
  std::size_t device_total = 0;     // GPU models: the device's memory in bytes; 0 on the CPU
};

struct KvLayout {
  std::int32_t num_blocks = 0;
  std::int32_t block_size = 16;  // tokens per block
};

class Model {
 public:
  virtual ~Model() = default;

  virtual const ModelHyperParams& hparams() const = 0;

  // Bytes of K and V one block of `block_size` tokens needs, over all layers.
  virtual std::size_t kv_block_bytes(std::int32_t block_size) const = 0;

  // (Re)allocates the KV storage. kOutOfMemory when it cannot.
  virtual Result<void> allocate_kv(const KvLayout& layout) = 0;

  // Runs one step. `logits` receives n_vocab floats per step with want_logits
  // (times its token count with all_logits), in order. Errors: kInvalidArgument (bad token id, block table too short,
  // logits too small), kContextExceeded (position beyond what RoPE and the KV
  // storage allow).
  virtual Result<void> forward(std::span<const SequenceStep> steps, std::span<float> logits) = 0;

  // Called by the engine after every step (the metrics), on its thread.
  virtual ModelMemory memory() const = 0;

  // Milliseconds each layer took in the last forward() ([n_layer], attention
  // and feed-forward together; embedding and logits excluded, so the sum is
  // below the step's time). Empty when that step was not timed: a failed step,
  // a backend that does not time layers, or one that times only some steps to
  // keep the cost down. Valid until the next forward().
  virtual std::span<const double> last_layer_ms() const { return {}; }

  // The backend op interface the model runs on (engine/backend/ops.h), for
  // the engine's instruments (profiling, the overflow check); null for a
  // model that does not run on one (test doubles).
  virtual backend::Ops* backend_ops() { return nullptr; }
};

}  // namespace hearth
