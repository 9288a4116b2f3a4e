#include "engine/sampler/penalties.h"

#include <algorithm>

namespace hearth {

void TokenHistory::push(int32_t token) {
  if (capacity_ == 0) return;
  if (ring_.size() < static_cast<size_t>(capacity_)) {
    ring_.push_back(token);
    return;
  }
  ring_[head_] = token;
  head_ = (head_ + 1) % ring_.size();
}

void TokenHistory::clear() {
  ring_.clear();
  head_ = 0;
}

void TokenHistory::counts(std::vector<std::pair<int32_t, int32_t>>& out) const {
  out.clear();
  std::vector<int32_t> sorted(ring_);
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    out.emplace_back(sorted[i], static_cast<int32_t>(j - i));
    i = j;
  }
}

void apply_penalties(std::span<float> logits, const TokenHistory& history, const SamplingParams& params) {
  if (!penalties_active(params)) return;
  std::vector<std::pair<int32_t, int32_t>> seen;
  history.counts(seen);
  for (const auto& [token, count] : seen) {
    if (token < 0 || static_cast<size_t>(token) >= logits.size()) continue;
    float& l = logits[static_cast<size_t>(token)];
    l = l > 0.0f ? l / params.repeat_penalty : l * params.repeat_penalty;
    l -= static_cast<float>(count) * params.frequency_penalty + params.presence_penalty;
  }
}

}  // namespace hearth
