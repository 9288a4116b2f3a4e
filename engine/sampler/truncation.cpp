#include "engine/sampler/truncation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace hearth {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

float clean(float logit) {
  return std::isnan(logit) ? kNegInf : logit;
}

// Unnormalized probability of a logit relative to the maximum logit.
double weight(float logit, float max_logit) {
  return static_cast<double>(std::exp(logit - max_logit));
}

// Keeps the prefix of sorted `c` whose weights reach p * total_mass, where
// total_mass is the weight of the whole set `c` was cut from.
void keep_top_p(std::vector<Candidate>& c, float p, double total_mass, float max_logit) {
  if (p >= 1.0f || c.empty()) return;
  const double target = static_cast<double>(p) * total_mass;
  double cum = 0.0;
  for (size_t i = 0; i < c.size(); ++i) {
    cum += weight(c[i].logit, max_logit);
    if (cum >= target) {
      c.resize(i + 1);
      return;
    }
  }
}

// The k best of the vocabulary through a bounded heap whose front is the worst
// kept candidate: O(V log k), and mostly one comparison per token.
void select_top_k(std::span<const float> logits, int32_t k, std::vector<Candidate>& out) {
  out.clear();
  out.reserve(static_cast<size_t>(k));
  const size_t first = std::min(logits.size(), static_cast<size_t>(k));
  for (size_t i = 0; i < first; ++i) out.push_back(Candidate{static_cast<int32_t>(i), clean(logits[i]), 0.0f});
  std::make_heap(out.begin(), out.end(), ranks_before);
  float worst = out.front().logit;
  for (size_t i = first; i < logits.size(); ++i) {
    if (!(logits[i] > worst)) continue;  // ids ascend: an equal logit ranks after; NaN never enters
    std::pop_heap(out.begin(), out.end(), ranks_before);
    out.back() = Candidate{static_cast<int32_t>(i), logits[i], 0.0f};
    std::push_heap(out.begin(), out.end(), ranks_before);
    worst = out.front().logit;
  }
  sort_candidates(out);
}

// Buckets of the distance below the maximum logit, for the top-p threshold.
constexpr double kBucketWidth = 0.25;  // nats
constexpr size_t kBuckets = 96;        // the last one catches everything farther

// A logit threshold keeping at least the top-p prefix; sets total_mass to the
// weight of the whole vocabulary.
float top_p_threshold(std::span<const float> logits, float p, float max_logit, double& total_mass) {
  std::array<double, kBuckets> hist{};
  total_mass = 0.0;
  for (float raw : logits) {
    const float l = clean(raw);
    if (l == kNegInf) continue;
    const double w = weight(l, max_logit);
    total_mass += w;
    const double d = std::min(static_cast<double>(max_logit - l) / kBucketWidth, static_cast<double>(kBuckets - 1));
    hist[static_cast<size_t>(d)] += w;
  }
  if (p >= 1.0f) return kNegInf;
  const double target = static_cast<double>(p) * total_mass;
  double cum = 0.0;
  for (size_t b = 0; b + 2 < kBuckets; ++b) {
    cum += hist[b];
    // One bucket of slack absorbs the different summation order of the walk.
    if (cum >= target) return max_logit - static_cast<float>(static_cast<double>(b + 2) * kBucketWidth);
  }
  return kNegInf;
}

void gather_above(std::span<const float> logits, float threshold, std::vector<Candidate>& out) {
  out.clear();
  for (size_t i = 0; i < logits.size(); ++i) {
    const float l = clean(logits[i]);
    if (l >= threshold && l != kNegInf) out.push_back(Candidate{static_cast<int32_t>(i), l, 0.0f});
  }
  sort_candidates(out);
}

}  // namespace

bool ranks_before(const Candidate& a, const Candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

void sort_candidates(std::vector<Candidate>& c) {
  std::sort(c.begin(), c.end(), ranks_before);
}

void apply_top_k(std::vector<Candidate>& c, int32_t k) {
  if (k > 0 && static_cast<size_t>(k) < c.size()) {
    std::nth_element(c.begin(), c.begin() + k, c.end(), ranks_before);
    c.resize(static_cast<size_t>(k));
  }
  sort_candidates(c);
}

void apply_top_p(std::vector<Candidate>& c, float p) {
  sort_candidates(c);
  if (c.empty()) return;
  double total = 0.0;
  for (const Candidate& x : c) total += weight(x.logit, c.front().logit);
  keep_top_p(c, p, total, c.front().logit);
}

void apply_min_p(std::vector<Candidate>& c, float min_p) {
  sort_candidates(c);
  if (min_p <= 0.0f || c.empty()) return;
  const float max_logit = c.front().logit;
  const float log_min_p = std::log(min_p);
  size_t keep = 1;
  while (keep < c.size() && c[keep].logit - max_logit >= log_min_p) ++keep;
  c.resize(keep);
}

void apply_temperature(std::vector<Candidate>& c, float t) {
  for (Candidate& x : c) x.logit /= t;
}

void softmax(std::vector<Candidate>& c) {
  if (c.empty()) return;
  float max_logit = c.front().logit;
  for (const Candidate& x : c) max_logit = std::max(max_logit, x.logit);
  double total = 0.0;
  for (const Candidate& x : c) total += weight(x.logit, max_logit);
  for (Candidate& x : c) x.p = static_cast<float>(weight(x.logit, max_logit) / total);
}

// The first index of the largest logit, NaN counted as -inf (all NaN or
// -inf: 0). In blocks: each block's maximum in independent lanes (no
// loop-carried compare chain, so the compiler vectorizes it: a greedy step
// over a 128k vocabulary took ~200 us per row one element at a time), the
// first block holding the overall maximum kept, then the first index in it
// equal to that maximum: the same index as a scan that keeps strict
// improvements.
int32_t argmax(std::span<const float> logits) {
  if (logits.empty()) return -1;
  constexpr size_t kBlock = 1024, kLanes = 16;
  const size_t n = logits.size();
  float best = kNegInf;
  size_t best_block = 0;
  for (size_t b0 = 0; b0 < n; b0 += kBlock) {
    const size_t end = std::min(n, b0 + kBlock);
    float lane[kLanes];
    for (float& l : lane) l = kNegInf;
    size_t i = b0;
    for (; i + kLanes <= end; i += kLanes) {
      for (size_t k = 0; k < kLanes; ++k) {
        const float v = logits[i + k];
        lane[k] = v > lane[k] ? v : lane[k];  // a NaN never compares greater
      }
    }
    float m = kNegInf;
    for (const float l : lane) m = l > m ? l : m;
    for (; i < end; ++i) m = logits[i] > m ? logits[i] : m;
    if (m > best) {
      best = m;
      best_block = b0;
    }
  }
  if (best == kNegInf) return 0;  // every logit -inf or NaN
  const size_t end = std::min(n, best_block + kBlock);
  for (size_t i = best_block; i < end; ++i) {
    if (logits[i] == best) return static_cast<int32_t>(i);
  }
  return static_cast<int32_t>(best_block);  // not reached: the block holds its maximum
}

void select_candidates(std::span<const float> logits, const SamplingParams& params, std::vector<Candidate>& out) {
  out.clear();
  if (logits.empty()) return;
  const float max_logit = clean(logits[static_cast<size_t>(argmax(logits))]);
  double total_mass = 0.0;
  if (params.top_k > 0 && static_cast<size_t>(params.top_k) < logits.size()) {
    select_top_k(logits, params.top_k, out);
    for (const Candidate& x : out) total_mass += weight(x.logit, max_logit);
  } else {
    // A margin below the min-p cut: apply_min_p below decides exactly.
    float threshold = params.min_p > 0.0f ? max_logit + std::log(params.min_p) - 1e-3f : kNegInf;
    if (params.top_p < 1.0f) {
      threshold = std::max(threshold, top_p_threshold(logits, params.top_p, max_logit, total_mass));
    }
    gather_above(logits, threshold, out);
  }
  if (out.empty() || out.front().logit == kNegInf) {  // every logit -inf or NaN: fall back to the argmax
    out.assign(1, Candidate{argmax(logits), max_logit, 0.0f});
    return;
  }
  keep_top_p(out, params.top_p, total_mass, max_logit);
  apply_min_p(out, params.min_p);
}

}  // namespace hearth
