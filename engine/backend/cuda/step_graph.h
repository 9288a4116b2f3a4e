// Decode steps replayed from CUDA graphs. A batch-1 decode step of an 8B
// model is ~470 kernel launches; enqueued one by one the host's launch gaps
// cost ~17% of the step (docs/perf-notes.md). CudaBackend captures the ops of
// a decode step once and replays the graph on later steps of the same shape.
//
// What may differ between the steps one graph serves: only device memory
// written before the launch (token ids, positions, KV slots, block tables in
// the step-input buffer). Everything baked into kernel arguments is in the
// key: token count, the attention's context bound (bucketed, so it changes
// every kContextBucket positions, not every token), the block-table row
// length, the buffers' addresses, the GEMV activation path, and whether the
// step records layer events (event-record nodes). A changed key is captured
// again and the executable graph updated in place (same topology: cheap) or
// re-instantiated.
//
// The op calls of a replayed step enqueue nothing; they fold their arguments
// into a fingerprint that must equal the captured step's, so a model whose op
// sequence changed fails the step with kInternal instead of replaying a stale
// graph.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>

#include "hearth/result.h"

namespace hearth::cuda {

struct StepGraphKey {
  std::int64_t n_tokens = 0;  // one per sequence
  int max_context = 0;        // bucketed attention bound (positions)
  int max_blocks = 0;         // block-table row length
  std::uint64_t buffers = 0;  // hash of the workspace and KV pool addresses
  int gemv_mode = 0;          // kernels::cuda::GemvActivations of the process default
  bool timed = false;         // records the layer events
  bool argmax = false;        // returns the rows' arg-maxes, not their logits
  bool operator==(const StepGraphKey&) const = default;
};

class StepGraphs {
 public:
  enum class Mode { kEager, kCapture, kReplay };
  // Positions per attention bucket: a decode step's context bound is rounded
  // up to a multiple of this, so one graph serves that many positions.
  static constexpr int kContextBucket = 256;

  StepGraphs() = default;
  ~StepGraphs();
  StepGraphs(const StepGraphs&) = delete;
  StepGraphs& operator=(const StepGraphs&) = delete;

  // What the step with `key` does: replay a graph of that key, capture one,
  // or (the first decode step of this backend, which loads the kernels' code
  // outside any capture) run eagerly.
  Mode plan(const StepGraphKey& key);
  // Starts capturing `stream` (mode kCapture).
  Result<void> begin_capture(cudaStream_t stream);
  // Ends the capture; unless `discard` (the step failed), keeps the graph
  // under `key` with `fingerprint`, ready to launch.
  Result<void> end_capture(cudaStream_t stream, const StepGraphKey& key, std::uint64_t fingerprint, bool discard);
  // The graph of `key` (plan returned kReplay or end_capture kept it).
  Result<void> launch(const StepGraphKey& key, cudaStream_t stream) const;
  std::uint64_t fingerprint(const StepGraphKey& key) const { return slot(key).fingerprint; }
  // Forgets every graph (a replay's op sequence did not match).
  void clear();

 private:
  // One executable graph per value of `timed` (a model timing one step in N
  // alternates between the two topologies).
  struct Slot {
    StepGraphKey key;
    cudaGraphExec_t exec = nullptr;
    std::uint64_t fingerprint = 0;
    bool valid = false;
  };
  Slot& slot(const StepGraphKey& key) { return slots_[key.timed ? 1 : 0]; }
  const Slot& slot(const StepGraphKey& key) const { return slots_[key.timed ? 1 : 0]; }

  std::array<Slot, 2> slots_;
  bool warmed_ = false;  // a decode step has run eagerly
};

// Mixes v into the fingerprint h (order-sensitive).
inline std::uint64_t fingerprint_mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

}  // namespace hearth::cuda
