// Each stage of the chain on tiny distributions with exact expected
// probabilities. Logits are ln(p) for p = {0.1, 0.2, 0.3, 0.4}, so a stage's
// expected output is a renormalized subset of those numbers.
#include "engine/sampler/penalties.h"
#include "engine/sampler/sampler.h"
#include "engine/sampler/truncation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace hearth {
namespace {

struct Want {
  int32_t id;
  double p;
};

std::vector<float> log_probs(const std::vector<double>& p) {
  std::vector<float> l;
  for (double x : p) l.push_back(static_cast<float>(std::log(x)));
  return l;
}

SamplingParams neutral() {
  SamplingParams p;
  p.temperature = 1.0f;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  return p;
}

void expect_candidates(const std::vector<Candidate>& got, const std::vector<Want>& want, const std::string& name) {
  ASSERT_EQ(got.size(), want.size()) << name;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].id, want[i].id) << name << " #" << i;
    EXPECT_NEAR(got[i].p, want[i].p, 1e-6) << name << " #" << i;
  }
}

struct StageCase {
  std::string name;
  int32_t top_k = 0;
  float top_p = 1.0f;
  float min_p = 0.0f;
  float temperature = 1.0f;
  std::vector<Want> want;
};

std::vector<StageCase> stage_cases() {
  const double s1 = std::sqrt(0.1), s2 = std::sqrt(0.2), s3 = std::sqrt(0.3), s4 = std::sqrt(0.4);
  const double ss = s1 + s2 + s3 + s4;
  return {
      {"none", 0, 1.0f, 0.0f, 1.0f, {{3, .4}, {2, .3}, {1, .2}, {0, .1}}},
      {"top_k=1", 1, 1.0f, 0.0f, 1.0f, {{3, 1.0}}},
      {"top_k=3", 3, 1.0f, 0.0f, 1.0f, {{3, .4 / .9}, {2, .3 / .9}, {1, .2 / .9}}},
      {"top_k=4", 4, 1.0f, 0.0f, 1.0f, {{3, .4}, {2, .3}, {1, .2}, {0, .1}}},
      {"top_k=10", 10, 1.0f, 0.0f, 1.0f, {{3, .4}, {2, .3}, {1, .2}, {0, .1}}},
      {"top_p=0.35", 0, 0.35f, 0.0f, 1.0f, {{3, 1.0}}},
      {"top_p=0.65", 0, 0.65f, 0.0f, 1.0f, {{3, .4 / .7}, {2, .3 / .7}}},
      {"top_p=0.75", 0, 0.75f, 0.0f, 1.0f, {{3, .4 / .9}, {2, .3 / .9}, {1, .2 / .9}}},
      {"top_p=0.95", 0, 0.95f, 0.0f, 1.0f, {{3, .4}, {2, .3}, {1, .2}, {0, .1}}},
      {"min_p=0.9", 0, 1.0f, 0.9f, 1.0f, {{3, 1.0}}},
      {"min_p=0.6", 0, 1.0f, 0.6f, 1.0f, {{3, .4 / .7}, {2, .3 / .7}}},
      {"min_p=0.3", 0, 1.0f, 0.3f, 1.0f, {{3, .4 / .9}, {2, .3 / .9}, {1, .2 / .9}}},
      {"min_p=0.2", 0, 1.0f, 0.2f, 1.0f, {{3, .4}, {2, .3}, {1, .2}, {0, .1}}},
      {"temperature=2", 0, 1.0f, 0.0f, 2.0f, {{3, s4 / ss}, {2, s3 / ss}, {1, s2 / ss}, {0, s1 / ss}}},
      {"temperature=0.5", 0, 1.0f, 0.0f, 0.5f, {{3, .16 / .3}, {2, .09 / .3}, {1, .04 / .3}, {0, .01 / .3}}},
      // top-k 3 -> {.4,.3,.2}/.9; top-p .7 stops at .7/.9; min-p .7 keeps .3/.4; T .5 squares.
      {"chain", 3, 0.7f, 0.7f, 0.5f, {{3, .16 / .25}, {2, .09 / .25}}},
      // top-p sees untempered probabilities: T = 0.1 after top-p .65 leaves two tokens.
      {"temperature_last",
       0,
       0.65f,
       0.0f,
       0.1f,
       {{3, std::pow(.4, 10) / (std::pow(.4, 10) + std::pow(.3, 10))},
        {2, std::pow(.3, 10) / (std::pow(.4, 10) + std::pow(.3, 10))}}},
  };
}

TEST(SamplerStages, ThroughTheSamplerChain) {
  const std::vector<float> logits = log_probs({.1, .2, .3, .4});
  for (const StageCase& c : stage_cases()) {
    SamplingParams p = neutral();
    p.top_k = c.top_k;
    p.top_p = c.top_p;
    p.min_p = c.min_p;
    p.temperature = c.temperature;
    Result<Sampler> s = Sampler::create(p);
    ASSERT_TRUE(s.ok()) << c.name;
    expect_candidates(s->candidates(logits), c.want, c.name);
  }
}

TEST(SamplerStages, ThroughTheStageFunctions) {
  const std::vector<float> logits = log_probs({.1, .2, .3, .4});
  for (const StageCase& c : stage_cases()) {
    std::vector<Candidate> cands;
    for (size_t i = 0; i < logits.size(); ++i) cands.push_back({static_cast<int32_t>(i), logits[i], 0.0f});
    apply_top_k(cands, c.top_k);
    apply_top_p(cands, c.top_p);
    apply_min_p(cands, c.min_p);
    apply_temperature(cands, c.temperature);
    softmax(cands);
    expect_candidates(cands, c.want, c.name);
  }
}

TEST(SamplerStages, TiesRankTheLowerIdFirst) {
  std::vector<Candidate> c{{4, 1.0f, 0}, {1, 2.0f, 0}, {0, 1.0f, 0}, {3, 2.0f, 0}};
  apply_top_k(c, 3);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].id, 1);
  EXPECT_EQ(c[1].id, 3);
  EXPECT_EQ(c[2].id, 0);
}

std::map<int32_t, double> softmax_of(const std::vector<double>& logits) {
  double z = 0.0;
  for (double l : logits) z += std::exp(l);
  std::map<int32_t, double> p;
  for (size_t i = 0; i < logits.size(); ++i) p[static_cast<int32_t>(i)] = std::exp(logits[i]) / z;
  return p;
}

TEST(SamplerStages, PenaltiesFollowTheDocumentedFormulas) {
  const std::vector<float> logits{2.0f, -1.0f, 0.5f, 1.0f, 0.0f};
  const std::vector<int32_t> history{0, 1, 0, 3, 99};  // 99: outside the vocabulary, ignored
  const struct {
    std::string name;
    float repeat, frequency, presence;
    int32_t last_n;
    std::vector<double> expected_logits;
  } cases[] = {
      {"off", 1.0f, 0.0f, 0.0f, 64, {2, -1, .5, 1, 0}},
      {"repeat", 2.0f, 0.0f, 0.0f, 64, {1, -2, .5, .5, 0}},
      {"frequency", 1.0f, 0.5f, 0.0f, 64, {1, -1.5, .5, .5, 0}},
      {"presence", 1.0f, 0.0f, 0.25f, 64, {1.75, -1.25, .5, .75, 0}},
      {"all", 2.0f, 0.5f, 0.25f, 64, {-.25, -2.75, .5, -.25, 0}},
      {"window of 3: [0, 3, 99]", 2.0f, 0.0f, 0.0f, 3, {1, -1, .5, .5, 0}},
      {"window of 0", 2.0f, 0.5f, 0.25f, 0, {2, -1, .5, 1, 0}},
  };
  for (const auto& c : cases) {
    SamplingParams p = neutral();
    p.repeat_penalty = c.repeat;
    p.frequency_penalty = c.frequency;
    p.presence_penalty = c.presence;
    p.penalty_last_n = c.last_n;
    Result<Sampler> s = Sampler::create(p);
    ASSERT_TRUE(s.ok()) << c.name;
    for (int32_t t : history) s->accept(t);
    const std::map<int32_t, double> want = softmax_of(c.expected_logits);
    const std::vector<Candidate> got = s->candidates(logits);
    ASSERT_EQ(got.size(), want.size()) << c.name;
    for (const Candidate& x : got) EXPECT_NEAR(x.p, want.at(x.id), 1e-6) << c.name << " token " << x.id;
    // The same numbers through the stage function itself.
    TokenHistory h(c.last_n);
    for (int32_t t : history) h.push(t);
    std::vector<float> penalized = logits;
    apply_penalties(penalized, h, p);
    for (size_t i = 0; i < penalized.size(); ++i) EXPECT_NEAR(penalized[i], c.expected_logits[i], 1e-6) << c.name;
  }
}

TEST(SamplerStages, HistoryKeepsOnlyTheLastTokens) {
  TokenHistory h(3);
  for (int32_t t : {5, 5, 7, 5, 9}) h.push(t);
  std::vector<std::pair<int32_t, int32_t>> counts;
  h.counts(counts);
  EXPECT_EQ(counts, (std::vector<std::pair<int32_t, int32_t>>{{5, 1}, {7, 1}, {9, 1}}));
  h.clear();
  h.counts(counts);
  EXPECT_TRUE(counts.empty());
}

}  // namespace
}  // namespace hearth

namespace hearth {
namespace {

// argmax (blocked and vectorizable) against a one-by-one scan that keeps
// strict improvements: random lengths around its block size, duplicated
// maxima (the lowest id wins), NaN (never wins) and infinities.
TEST(Argmax, MatchesAScanOnRandomRowsWithTiesNaNAndInfinities) {
  std::mt19937 rng(99);
  const auto scan = [](const std::vector<float>& v) {
    size_t best = 0;
    float b = std::isnan(v[0]) ? -std::numeric_limits<float>::infinity() : v[0];
    for (size_t i = 1; i < v.size(); ++i) {
      if (v[i] > b) best = i, b = v[i];
    }
    return static_cast<int32_t>(best);
  };
  for (int trial = 0; trial < 300; ++trial) {
    const size_t n = std::uniform_int_distribution<size_t>(1, 5000)(rng);
    std::vector<float> v(n);
    std::uniform_int_distribution<int> small(-20, 20);  // few distinct values: many ties
    for (float& x : v) x = static_cast<float>(small(rng)) * 0.5f;
    std::uniform_int_distribution<size_t> at(0, n - 1);
    const int kind = trial % 5;
    if (kind == 1) v[at(rng)] = std::numeric_limits<float>::quiet_NaN();
    if (kind == 2)
      v[at(rng)] = std::numeric_limits<float>::infinity(), v[at(rng)] = std::numeric_limits<float>::infinity();
    if (kind == 3) std::fill(v.begin(), v.end(), -std::numeric_limits<float>::infinity());
    if (kind == 4) {
      std::fill(v.begin(), v.end(), std::numeric_limits<float>::quiet_NaN());
      v[at(rng)] = -3.0f;
    }
    ASSERT_EQ(argmax(v), scan(v)) << "trial " << trial << " n " << n;
  }
  EXPECT_EQ(argmax(std::vector<float>{}), -1);
}

}  // namespace
}  // namespace hearth
