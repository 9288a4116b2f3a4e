#include "engine/backend/cuda/step_graph.h"

#include <string>

namespace hearth::cuda {
namespace {

Result<void> check(cudaError_t e, const char* call) {
  if (e == cudaSuccess) return {};
  static_cast<void>(cudaGetLastError());
  return make_error(ErrorCode::kInternal, std::string("CUDA graph: ") + call + " failed: " + cudaGetErrorString(e));
}

}  // namespace

StepGraphs::~StepGraphs() {
  clear();
}

void StepGraphs::clear() {
  for (Slot& s : slots_) {
    if (s.exec != nullptr) static_cast<void>(cudaGraphExecDestroy(s.exec));
    s = Slot{};
  }
}

StepGraphs::Mode StepGraphs::plan(const StepGraphKey& key) {
  const Slot& s = slot(key);
  if (s.valid && s.key == key) return Mode::kReplay;
  if (!warmed_) {
    warmed_ = true;
    return Mode::kEager;
  }
  return Mode::kCapture;
}

Result<void> StepGraphs::begin_capture(cudaStream_t stream) {
  // Relaxed: the launchers' occupancy queries and attribute reads are not
  // stream work and may run while the stream captures.
  return check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed), "cudaStreamBeginCapture");
}

Result<void> StepGraphs::end_capture(cudaStream_t stream, const StepGraphKey& key, std::uint64_t fingerprint,
                                     bool discard) {
  cudaGraph_t graph = nullptr;
  HEARTH_TRY(check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture"));
  Slot& s = slot(key);
  s.valid = false;
  Result<void> r;
  if (!discard) {
    // Same topology as the slot's graph (only arguments moved): update in
    // place, which costs a fraction of an instantiation.
    cudaGraphExecUpdateResultInfo info{};
    if (s.exec != nullptr && cudaGraphExecUpdate(s.exec, graph, &info) != cudaSuccess) {
      static_cast<void>(cudaGetLastError());
      static_cast<void>(cudaGraphExecDestroy(s.exec));
      s.exec = nullptr;
    }
    if (s.exec == nullptr) r = check(cudaGraphInstantiate(&s.exec, graph, 0), "cudaGraphInstantiate");
    if (r) {
      s.key = key;
      s.fingerprint = fingerprint;
      s.valid = true;
    }
  }
  static_cast<void>(cudaGraphDestroy(graph));
  return r;
}

Result<void> StepGraphs::launch(const StepGraphKey& key, cudaStream_t stream) const {
  const Slot& s = slot(key);
  if (!s.valid || !(s.key == key)) return make_error(ErrorCode::kInternal, "CUDA graph: no graph for this step");
  return check(cudaGraphLaunch(s.exec, stream), "cudaGraphLaunch");
}

}  // namespace hearth::cuda
