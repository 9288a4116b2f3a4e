#include "engine/sampler/sampler.h"

#include <cassert>

namespace hearth {

Result<Sampler> Sampler::create(const SamplingParams& params) {
  HEARTH_TRY(validate(params));
  return Sampler(params);
}

Sampler::Sampler(const SamplingParams& params) : params_(params), rng_(params.seed), history_(params.penalty_last_n) {}

void Sampler::reset() {
  history_.clear();
  rng_.reseed(params_.seed);
}

std::span<const float> Sampler::penalized(std::span<const float> logits) {
  if (!penalties_apply()) return logits;
  work_.assign(logits.begin(), logits.end());
  apply_penalties(work_, history_, params_);
  return work_;
}

void Sampler::run_chain(std::span<const float> logits) {
  select_candidates(logits, params_, cands_);
  apply_temperature(cands_, params_.temperature);
  softmax(cands_);
}

int32_t Sampler::sample(std::span<const float> logits) {
  assert(!logits.empty());
  const std::span<const float> view = penalized(logits);
  if (params_.temperature <= 0.0f) return argmax(view);
  run_chain(view);
  if (cands_.size() == 1) return cands_.front().id;
  const double u = rng_.next_double();
  double cum = 0.0;
  for (const Candidate& c : cands_) {
    cum += static_cast<double>(c.p);
    if (u < cum) return c.id;
  }
  return cands_.back().id;  // rounding left the total just below u
}

std::vector<Candidate> Sampler::candidates(std::span<const float> logits) {
  const std::span<const float> view = penalized(logits);
  if (params_.temperature <= 0.0f) {
    const int32_t best = argmax(view);
    if (best < 0) return {};
    return {Candidate{best, view[static_cast<size_t>(best)], 1.0f}};
  }
  run_chain(view);
  return cands_;
}

}  // namespace hearth
