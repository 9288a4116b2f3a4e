// Repetition, frequency and presence penalties over a sequence's recent tokens
// (llama.cpp's formulas). For each distinct token t seen c > 0 times among the
// last penalty_last_n accepted tokens:
//   logit[t] = logit[t] > 0 ? logit[t] / repeat_penalty : logit[t] * repeat_penalty
//   logit[t] -= c * frequency_penalty + presence_penalty
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "hearth/sampling.h"

namespace hearth {

// The last `capacity` accepted tokens (a ring buffer).
class TokenHistory {
 public:
  explicit TokenHistory(int32_t capacity) : capacity_(capacity < 0 ? 0 : capacity) {}
  void push(int32_t token);
  void clear();
  int32_t size() const { return static_cast<int32_t>(ring_.size()); }
  // Distinct tokens with their counts, by ascending token id.
  void counts(std::vector<std::pair<int32_t, int32_t>>& out) const;

 private:
  int32_t capacity_;
  size_t head_ = 0;            // next slot to overwrite once full
  std::vector<int32_t> ring_;  // [min(pushed, capacity)]
};

// Applies the penalties in place; `logits` is indexed by token id, tokens
// outside it are ignored.
void apply_penalties(std::span<float> logits, const TokenHistory& history, const SamplingParams& params);

}  // namespace hearth
