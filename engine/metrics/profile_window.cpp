#include "engine/metrics/profile_window.h"

#include <algorithm>
#include <utility>

namespace hearth {

const char* kernel_kind_name(KernelKind kind) {
  switch (kind) {
    case KernelKind::kEmbedding:
      return "embedding";
    case KernelKind::kNorm:
      return "norm";
    case KernelKind::kMatmul:
      return "matmul";
    case KernelKind::kRope:
      return "rope";
    case KernelKind::kKvStore:
      return "kv_store";
    case KernelKind::kAttention:
      return "attention";
    case KernelKind::kActivation:
      return "activation";
    case KernelKind::kElementwise:
      return "elementwise";
    case KernelKind::kSampling:
      return "sampling";
  }
  return "?";
}

}  // namespace hearth

namespace hearth::metrics {

void ProfileWindow::reset(std::int32_t n_layer, std::size_t keep_steps, std::uint64_t window) {
  std::lock_guard lock(mu_);
  const DeviceCeilings ceilings = sums_.ceilings;
  sums_ = ProfileReport{};
  sums_.window = window;
  sums_.n_layer = n_layer;
  sums_.ceilings = ceilings;
  for (std::vector<double>* m : {&sums_.matrix_us, &sums_.matrix_bytes, &sums_.matrix_flops})
    m->assign(static_cast<std::size_t>(n_layer) * kKernelKinds, 0.0);
  recent_.clear();
  keep_steps_ = keep_steps;
}

void ProfileWindow::add(StepProfile step) {
  std::lock_guard lock(mu_);
  ++sums_.steps;
  sums_.forward_us += step.forward_us;
  sums_.host_wait_us += step.host_wait_us;
  sums_.gpu_idle_us += step.gpu_idle_us;
  sums_.sampling_us += step.sampling_us;
  sums_.scheduling_us += step.scheduling_us;
  for (const OpProfileEntry& e : step.ops) {
    const auto kind = static_cast<std::size_t>(e.kind);
    if (e.layer >= 0 && e.layer < sums_.n_layer) {
      const std::size_t cell = ProfileReport::at(e.layer, e.kind);
      sums_.matrix_us[cell] += e.duration_us;
      sums_.matrix_bytes[cell] += static_cast<double>(e.input_bytes + e.output_bytes);
      sums_.matrix_flops[cell] += static_cast<double>(e.flops);
    } else {
      sums_.outside_layers_us[kind] += e.duration_us;
    }
  }
  if (keep_steps_ == 0) return;
  if (recent_.size() == keep_steps_) recent_.pop_front();
  recent_.push_back(std::move(step));
}

void ProfileWindow::set_ceilings(const DeviceCeilings& ceilings) {
  std::lock_guard lock(mu_);
  sums_.ceilings = ceilings;
}

ProfileReport ProfileWindow::report_since(std::int64_t first_step) const {
  std::lock_guard lock(mu_);
  ProfileReport r = sums_;
  // Steps are numbered in order: skip the older ones without copying them.
  const auto it =
      std::partition_point(recent_.begin(), recent_.end(), [&](const StepProfile& s) { return s.step < first_step; });
  r.recent.assign(it, recent_.end());
  return r;
}

}  // namespace hearth::metrics
