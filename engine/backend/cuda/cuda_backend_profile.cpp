// CudaBackend's profiling hooks: an event before and after each op on the
// stream (instrumented steps run eagerly, never from a graph), read once the
// step has synchronized. Event 0 is recorded at the end of begin_step, so op
// start times are placed on the host clock as (host time of event 0) + (GPU
// time since event 0): the device's own timeline, aligned at one point.
#include <algorithm>

#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_ceilings.h"
#include "engine/core/log.h"
#include "kernels/cuda/gemv.h"

namespace hearth::cuda {
namespace kc = hearth::kernels::cuda;

DeviceCeilings CudaBackend::measure_ceilings() {
  return measure_cuda_ceilings(*ctx_);
}

void CudaBackend::profile_record(std::size_t event) {
  if (!op_events_ok_) return;
  Result<void> r = op_events_.ensure(event + 1);
  if (r) r = op_events_.record(static_cast<std::uint32_t>(event), ctx_->stream());
  if (!r) {
    op_events_ok_ = false;  // the step runs on, untimed
    log::get("cuda")->warn("profiling: {}", r.error().message);
  }
}

void CudaBackend::profile_op_begin(std::size_t index) {
  profile_record(1 + 2 * index);
}

void CudaBackend::profile_op_end(std::size_t index) {
  profile_record(2 + 2 * index);
}

// One launch over q/k/v (or gate/up) for a single token; bias and residual
// fused into the GEMV's epilogue where the GEMV path runs.
bool CudaBackend::op_fused(backend::OpKind kind) const {
  const std::int64_t gemv_rows = std::max<std::int64_t>(kc::kMaxGemvTokens, gemv_max_tokens_);
  switch (kind) {
    case backend::OpKind::kLinearMany:
      return n_tokens_ == 1;
    case backend::OpKind::kLinear:
      return n_tokens_ <= gemv_rows;
    default:
      return false;
  }
}

void CudaBackend::profile_step_done(StepProfile& p) {
  p.host_wait_us = host_wait_us_;
  std::vector<OpProfileEntry>& ops = profile_ops();
  if (!op_events_ok_ || op_events_.size() < 1 + 2 * ops.size()) return;
  const double t0 = us_since_step_start(events_t0_);
  double busy = 0, idle = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto start = op_events_.elapsed_ms(0, 1 + 2 * i);
    const auto dur = op_events_.elapsed_ms(1 + 2 * i, 2 + 2 * i);
    if (!start || !dur) {
      log::get("cuda")->warn("profiling: {}", (!start ? start.error() : dur.error()).message);
      return;
    }
    ops[i].start_us = t0 + *start * 1000.0;
    ops[i].duration_us = *dur * 1000.0;
    busy += ops[i].duration_us;
    if (i > 0) {
      // The device sat idle between the previous op's end and this one's start (launch gaps, host work).
      if (const auto gap = op_events_.elapsed_ms(2 * i, 1 + 2 * i)) idle += std::max(0.0, *gap * 1000.0);
    }
  }
  p.gpu_busy_us = busy;
  p.gpu_idle_us = idle;
}

}  // namespace hearth::cuda
