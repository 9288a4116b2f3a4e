#include "engine/backend/cuda/layer_timer.h"

#include <string>

namespace hearth::cuda {
namespace {

Result<void> check(cudaError_t e, const char* call) {
  if (e == cudaSuccess) return {};
  static_cast<void>(cudaGetLastError());
  return make_error(ErrorCode::kInternal, std::string("layer timing: ") + call + " failed: " + cudaGetErrorString(e));
}

}  // namespace

LayerTimer::~LayerTimer() {
  for (cudaEvent_t e : events_) static_cast<void>(cudaEventDestroy(e));
}

Result<void> LayerTimer::init(std::uint32_t n_layers) {
  if (!events_.empty()) return {};
  events_.reserve(n_layers + 1);
  for (std::uint32_t i = 0; i <= n_layers; ++i) {
    cudaEvent_t e = nullptr;
    HEARTH_TRY(check(cudaEventCreate(&e), "cudaEventCreate"));
    events_.push_back(e);
  }
  return {};
}

Result<void> LayerTimer::ensure(std::size_t n) {
  while (events_.size() < n) {
    cudaEvent_t e = nullptr;
    HEARTH_TRY(check(cudaEventCreate(&e), "cudaEventCreate"));
    events_.push_back(e);
  }
  return {};
}

Result<double> LayerTimer::elapsed_ms(std::size_t i, std::size_t j) const {
  if (i >= events_.size() || j >= events_.size()) return make_error(ErrorCode::kInternal, "event out of range");
  float ms = 0.0f;
  HEARTH_TRY(check(cudaEventElapsedTime(&ms, events_[i], events_[j]), "cudaEventElapsedTime"));
  return static_cast<double>(ms);
}

Result<void> LayerTimer::record(std::uint32_t i, cudaStream_t stream, bool capturing) const {
  if (i >= events_.size()) return make_error(ErrorCode::kInternal, "layer timing: boundary out of range");
  if (capturing) {
    return check(cudaEventRecordWithFlags(events_[i], stream, cudaEventRecordExternal), "cudaEventRecordWithFlags");
  }
  return check(cudaEventRecord(events_[i], stream), "cudaEventRecord");
}

Result<void> LayerTimer::read(std::span<double> out) const {
  if (out.size() + 1 != events_.size()) return make_error(ErrorCode::kInternal, "layer timing: wrong layer count");
  for (std::size_t l = 0; l < out.size(); ++l) {
    float ms = 0.0f;
    HEARTH_TRY(check(cudaEventElapsedTime(&ms, events_[l], events_[l + 1]), "cudaEventElapsedTime"));
    out[l] = static_cast<double>(ms);
  }
  return {};
}

}  // namespace hearth::cuda
