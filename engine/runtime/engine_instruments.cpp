// The engine's side of the instruments (hearth/profile.h): callers ask from
// any thread (atomics); the engine thread brings the backend to what was
// asked between steps, and collects each step's profile and overflow finding.
#include <utility>

#include "engine/backend/ops.h"
#include "engine/runtime/engine_impl.h"

namespace hearth::runtime {

std::uint64_t EngineImpl::set_profiling(const ProfileOptions& options) {
  want_keep_steps_.store(options.keep_steps);
  const std::uint64_t window = options.enabled ? profiling_generation_.fetch_add(1) + 1 : 0;
  want_profiling_.store(options.enabled);
  return window;
}

void EngineImpl::set_overflow_check(bool on) {
  want_overflow_.store(on);
}

std::optional<OverflowFinding> EngineImpl::first_overflow() const {
  std::lock_guard lock(overflow_mu_);
  return overflow_;
}

void EngineImpl::apply_instruments() {
  backend::Ops* ops = bundle_.model->backend_ops();
  if (ops == nullptr) return;
  const bool profiling = want_profiling_.load();
  const std::uint64_t generation = profiling_generation_.load();
  if (profiling != ops->profiling() || (profiling && generation != applied_generation_)) {
    ops->set_profiling(profiling);
    if (profiling) {
      applied_generation_ = generation;
      profile_.set_ceilings(ops->ceilings());  // probed the first time on this device (a fraction of a second)
      profile_.reset(static_cast<std::int32_t>(bundle_.model->hparams().n_layer), want_keep_steps_.load(), generation);
      profile_origin_ = Clock::now();
      profiled_steps_ = 0;
    }
  }
  const bool overflow = want_overflow_.load();
  if (overflow != applied_overflow_) {
    ops->set_overflow_check(overflow);
    applied_overflow_ = overflow;
    checked_steps_ = 0;
    std::lock_guard lock(overflow_mu_);
    overflow_.reset();
  }
}

void EngineImpl::collect_instruments(const metrics::StepRecord& rec, Clock::time_point sampled_from) {
  backend::Ops* ops = bundle_.model->backend_ops();
  if (ops == nullptr) return;
  if (applied_overflow_) {
    const std::optional<OverflowFinding>& f = ops->overflow();
    std::lock_guard lock(overflow_mu_);
    if (f && !overflow_) {
      overflow_ = *f;
      overflow_->step = checked_steps_;
    }
    ++checked_steps_;
  }
  const StepProfile* p = ops->profiling() ? ops->last_profile() : nullptr;
  if (p == nullptr) return;
  const auto us = [this](Clock::time_point t) {
    return std::chrono::duration<double, std::micro>(t - profile_origin_).count();
  };
  StepProfile step = *p;
  step.step = profiled_steps_++;
  step.start_us = us(ops->last_profile_start());
  for (OpProfileEntry& e : step.ops) {
    e.step = step.step;
    e.start_us += step.start_us;
  }
  // The sampler reads each sequence's logits row once (host work, no FLOP count).
  step.sampling_us = rec.sample_ms * 1000.0;
  step.scheduling_us = rec.schedule_ms * 1000.0;
  OpProfileEntry s;
  s.name = "sampling";
  s.kind = KernelKind::kSampling;
  s.step = step.step;
  s.start_us = us(sampled_from);
  s.duration_us = step.sampling_us;
  s.input_bytes = static_cast<std::uint64_t>(logits_.size()) * sizeof(float);
  s.output_bytes = static_cast<std::uint64_t>(rec.decode_tokens) * sizeof(std::int32_t);
  step.ops.push_back(std::move(s));
  profile_.add(std::move(step));
}

}  // namespace hearth::runtime
