// A per-sequence sampler: turns one step's logits into a token.
//
// The chain, in llama.cpp's default order:
//   1. penalties   repetition / frequency / presence over the last
//                  penalty_last_n accepted tokens (penalties.h)
//   2. top-k       the k highest logits
//   3. top-p       the shortest prefix with probability mass >= top_p
//   4. min-p       tokens with p >= min_p * p_max
//   5. temperature logits / temperature
//   6. draw        softmax over the kept candidates, then an inverse-CDF draw:
//                  u = Xoshiro256::next_double() in [0, 1), the first candidate
//                  (in candidate order: logit descending, ties lower id first)
//                  whose cumulative probability exceeds u.
// temperature <= 0 is greedy: the argmax of the penalized logits, ties to the
// lowest id, and consumes no randomness. NaN logits count as -inf.
//
// Cost per step: O(V) with a bounded heap (top-k) or a one-pass threshold
// (top-k off); only the surviving candidates are sorted. The vocabulary is
// never fully sorted.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/sampler/penalties.h"
#include "engine/sampler/rng.h"
#include "engine/sampler/truncation.h"
#include "hearth/result.h"
#include "hearth/sampling.h"

namespace hearth {

class Sampler {
 public:
  // kInvalidArgument naming the bad field (see validate()).
  static Result<Sampler> create(const SamplingParams& params);

  // Picks the next token from `logits` ([vocab], indexed by token id;
  // precondition: non-empty). Does not record it: call accept().
  int32_t sample(std::span<const float> logits);
  // Records a token (generated, or a prompt token if penalties should see the
  // prompt) in the penalty history.
  void accept(int32_t token) { history_.push(token); }
  // Whether sample() is the plain arg-max of the logits as they come
  // (temperature <= 0 and no penalty applies): a device may take it for us.
  bool plain_argmax() const { return params_.temperature <= 0.0f && !penalties_apply(); }
  // Forgets the history and restarts the random sequence from the seed.
  void reset();

  // The candidates left after stages 1-5 with their final probabilities, in
  // candidate order (greedy: the argmax alone, p = 1). Draws nothing.
  std::vector<Candidate> candidates(std::span<const float> logits);

  const SamplingParams& params() const { return params_; }

 private:
  // Whether the penalties change the logits now (configured, and a history to apply).
  bool penalties_apply() const { return penalties_active(params_) && history_.size() != 0; }
  explicit Sampler(const SamplingParams& params);
  // Stage 1: the logits the rest of the chain sees (penalized copy or the input).
  std::span<const float> penalized(std::span<const float> logits);
  void run_chain(std::span<const float> logits);

  SamplingParams params_;
  Xoshiro256 rng_;
  TokenHistory history_;
  std::vector<float> work_;       // [vocab] penalized logits scratch
  std::vector<Candidate> cands_;  // candidates scratch, reused across steps
};

}  // namespace hearth
