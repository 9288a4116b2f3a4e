#include "app/profiler_data.h"

#include <algorithm>

namespace hearth::app {

StepBreakdown breakdown_of(const StepProfile& s) {
  StepBreakdown b;
  b.step = s.step;
  b.tokens = s.tokens;
  const bool device = s.gpu_busy_us > 0;
  b.busy_us = device ? s.gpu_busy_us : s.forward_us;
  b.idle_us = device ? s.gpu_idle_us : 0.0;
  b.other_us = std::max(0.0, s.forward_us - b.busy_us - b.idle_us);
  b.host_wait_us = s.host_wait_us;
  b.sampling_us = s.sampling_us;
  b.scheduling_us = s.scheduling_us;
  return b;
}

void ProfilerData::clear() {
  sums_ = ProfileReport{};
  next_step_ = 0;
  steps_.clear();
  cells_.clear();
  trace_.clear();
}

void ProfilerData::apply(const ProfileUpdate& update) {
  if (!update.report) return;
  const ProfileReport& r = *update.report;
  if (update.window != window_ || r.n_layer != sums_.n_layer || r.steps < sums_.steps) {
    clear();
    window_ = update.window;
  }
  const std::size_t cells = static_cast<std::size_t>(r.n_layer) * kKernelKinds;
  for (const StepProfile& s : r.recent) {
    if (s.step < next_step_) continue;  // already seen (a whole report applied twice)
    next_step_ = s.step + 1;
    steps_.push_back(breakdown_of(s));
    std::vector<float> m(cells, 0.0f);
    for (const OpProfileEntry& e : s.ops) {
      if (e.layer >= 0 && e.layer < r.n_layer)
        m[ProfileReport::at(e.layer, e.kind)] += static_cast<float>(e.duration_us);
    }
    cells_.push_back(std::move(m));
    trace_.push_back(s);
    if (steps_.size() > kHistorySteps) {
      steps_.pop_front();
      cells_.pop_front();
    }
    if (trace_.size() > kTraceSteps) trace_.pop_front();
  }
  // The sums; the steps are kept above (a copy of the few new ones, dropped here).
  sums_ = r;
  sums_.recent.clear();
}

ProfileReport ProfilerData::exportReport() const {
  ProfileReport r = sums_;
  r.recent.assign(trace_.begin(), trace_.end());
  return r;
}

std::vector<double> ProfilerData::cellHistory(std::int32_t layer, KernelKind kind) const {
  std::vector<double> out;
  if (layer < 0 || layer >= sums_.n_layer) return out;
  out.reserve(cells_.size());
  for (const std::vector<float>& m : cells_) out.push_back(m[ProfileReport::at(layer, kind)]);
  return out;
}

}  // namespace hearth::app
