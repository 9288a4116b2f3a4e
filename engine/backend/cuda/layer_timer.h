// Per-layer times of a forward pass on the GPU: CUDA events recorded on the
// model's stream between layers, read once the step has synchronized (no extra
// sync). The op profiler (CudaBackend's profile hooks) uses a second timer as
// its event pool: an event before and after each op. An event record costs about what a kernel launch does on the host,
// so a model records them only on the steps it means to time.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <span>
#include <vector>

#include "hearth/result.h"

namespace hearth::cuda {

class LayerTimer {
 public:
  LayerTimer() = default;
  ~LayerTimer();
  LayerTimer(const LayerTimer&) = delete;
  LayerTimer& operator=(const LayerTimer&) = delete;

  // Creates the n_layers + 1 events on the current device (first call only).
  Result<void> init(std::uint32_t n_layers);
  // At least n events (more are created on the current device, none freed):
  // the profiler's pool, two per op of a step.
  Result<void> ensure(std::size_t n);
  std::size_t size() const { return events_.size(); }
  // Milliseconds from event i to event j, both completed.
  Result<double> elapsed_ms(std::size_t i, std::size_t j) const;
  // Records boundary `i` on `stream`: 0 before the first layer, i after layer i - 1.
  // While `stream` captures a graph, the record becomes one of its nodes
  // (cudaEventRecordExternal), so each replay times its layers.
  Result<void> record(std::uint32_t i, cudaStream_t stream, bool capturing = false) const;
  // After every recorded boundary has completed (the stream synchronized):
  // out[l] = ms between boundaries l and l + 1, out.size() == n_layers.
  Result<void> read(std::span<double> out) const;

 private:
  std::vector<cudaEvent_t> events_;  // [n_layers + 1]
};

}  // namespace hearth::cuda
