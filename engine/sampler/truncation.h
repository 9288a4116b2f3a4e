// The truncation stages of the sampler chain (top-k, top-p, min-p) and the
// temperature / softmax steps, over a candidate list.
//
// Candidate order: logit descending, ties by lower token id first. Every stage
// leaves its list in that order. Stages see untempered logits (temperature
// comes last, as in llama.cpp), so top-p's probabilities are softmax(logits).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "hearth/sampling.h"

namespace hearth {

struct Candidate {
  int32_t id = 0;
  float logit = 0.0f;
  float p = 0.0f;  // probability, filled by softmax()
};

// The candidate order: a before b.
bool ranks_before(const Candidate& a, const Candidate& b);
void sort_candidates(std::vector<Candidate>& c);

// Keeps the k best (k == 0 or k >= size: all).
void apply_top_k(std::vector<Candidate>& c, int32_t k);
// Keeps the shortest prefix whose probability mass (softmax over `c`) reaches
// p; at least one candidate. p >= 1 keeps all.
void apply_top_p(std::vector<Candidate>& c, float p);
// Keeps candidates with p_i >= min_p * p_max, i.e. logit >= max + ln(min_p).
void apply_min_p(std::vector<Candidate>& c, float min_p);
// Divides every logit by t (t > 0).
void apply_temperature(std::vector<Candidate>& c, float t);
// Sets p = softmax(logit) over the list (double accumulation).
void softmax(std::vector<Candidate>& c);

// The token with the highest logit, ties to the lowest id; NaN counts as -inf.
int32_t argmax(std::span<const float> logits);

// Top-k, top-p and min-p applied to a whole vocabulary of logits, without
// sorting it: a bounded heap for top-k; otherwise a one-pass mass histogram
// finds a logit threshold that provably keeps the top-p prefix, and only the
// tokens above it are sorted. Equals running the stages on the full list.
// `out` gets the kept candidates (p unset), in candidate order.
void select_candidates(std::span<const float> logits, const SamplingParams& params, std::vector<Candidate>& out);

}  // namespace hearth
