#include "engine/sampler/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace hearth {
namespace {

SamplingParams neutral() {
  SamplingParams p;
  p.temperature = 1.0f;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  return p;
}

Sampler make(const SamplingParams& p) {
  Result<Sampler> s = Sampler::create(p);
  EXPECT_TRUE(s.ok());
  return std::move(s).value();
}

std::vector<float> random_logits(std::mt19937_64& rng, size_t vocab, float scale) {
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> l(vocab);
  for (float& x : l) x = normal(rng);
  return l;
}

TEST(Sampler, InvalidParametersNameTheField) {
  const struct {
    std::string field;
    std::function<void(SamplingParams&)> set;
  } cases[] = {
      {"temperature", [](SamplingParams& p) { p.temperature = -0.1f; }},
      {"temperature", [](SamplingParams& p) { p.temperature = std::numeric_limits<float>::quiet_NaN(); }},
      {"top_k", [](SamplingParams& p) { p.top_k = -1; }},
      {"top_p", [](SamplingParams& p) { p.top_p = 0.0f; }},
      {"top_p", [](SamplingParams& p) { p.top_p = 1.5f; }},
      {"min_p", [](SamplingParams& p) { p.min_p = -0.01f; }},
      {"min_p", [](SamplingParams& p) { p.min_p = 1.01f; }},
      {"repeat_penalty", [](SamplingParams& p) { p.repeat_penalty = 0.0f; }},
      {"frequency_penalty", [](SamplingParams& p) { p.frequency_penalty = std::numeric_limits<float>::infinity(); }},
      {"presence_penalty", [](SamplingParams& p) { p.presence_penalty = std::numeric_limits<float>::quiet_NaN(); }},
      {"penalty_last_n", [](SamplingParams& p) { p.penalty_last_n = -1; }},
  };
  EXPECT_TRUE(validate(SamplingParams{}).ok());
  for (const auto& c : cases) {
    SamplingParams p;
    c.set(p);
    Result<Sampler> s = Sampler::create(p);
    ASSERT_FALSE(s.ok()) << c.field;
    EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(s.error().message.find(c.field), std::string::npos) << s.error().message;
  }
}

TEST(Sampler, GreedyTakesTheArgmaxWithTiesToTheLowestId) {
  SamplingParams p = neutral();
  p.temperature = 0.0f;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const struct {
    std::vector<float> logits;
    int32_t expected;
  } cases[] = {
      {{1, 3, 3, 2}, 1}, {{5, 5}, 0}, {{-1, -2, -0.5f}, 2}, {{nan, 1, 2}, 2}, {{nan, nan}, 0}, {{7}, 0},
  };
  Sampler s = make(p);
  for (const auto& c : cases) EXPECT_EQ(s.sample(c.logits), c.expected);
  // Penalties apply before the argmax: 2 / 1.5 < 1.9.
  p.repeat_penalty = 1.5f;
  Sampler penalized = make(p);
  penalized.accept(0);
  EXPECT_EQ(penalized.sample(std::vector<float>{2.0f, 1.9f}), 1);
}

TEST(Sampler, SameSeedSameTokens) {
  std::mt19937_64 gen(11);
  const std::vector<float> logits = random_logits(gen, 1000, 2.0f);
  SamplingParams p;  // llama.cpp's defaults: top-k 40, top-p .95, min-p .05, T .8
  p.seed = 1234;
  p.repeat_penalty = 1.1f;
  auto run = [&](Sampler& s) {
    std::vector<int32_t> out;
    for (int i = 0; i < 200; ++i) {
      out.push_back(s.sample(logits));
      s.accept(out.back());
    }
    return out;
  };
  Sampler a = make(p), b = make(p);
  const std::vector<int32_t> first = run(a);
  EXPECT_EQ(first, run(b));
  a.reset();
  EXPECT_EQ(first, run(a));
  p.seed = 1235;
  Sampler c = make(p);
  EXPECT_NE(first, run(c));
  EXPECT_GT(std::set<int32_t>(first.begin(), first.end()).size(), 5u);  // it does sample
}

TEST(Sampler, DrawsFollowTheCandidateProbabilities) {
  const std::vector<float> logits{std::log(0.1f), std::log(0.2f), std::log(0.3f), std::log(0.4f), -1e30f};
  const struct {
    std::string name;
    int32_t top_k;
    std::vector<double> expected;
  } cases[] = {
      {"full", 0, {.1, .2, .3, .4, 0}},
      {"top_k=2", 2, {0, 0, .3 / .7, .4 / .7, 0}},
  };
  for (const auto& c : cases) {
    SamplingParams p = neutral();
    p.top_k = c.top_k;
    p.seed = 99;
    Sampler s = make(p);
    constexpr int kDraws = 40000;
    std::vector<int> counts(logits.size(), 0);
    for (int i = 0; i < kDraws; ++i) ++counts[static_cast<size_t>(s.sample(logits))];
    double chi2 = 0.0;
    for (size_t t = 0; t < logits.size(); ++t) {
      if (c.expected[t] == 0.0) {
        EXPECT_EQ(counts[t], 0) << c.name << " token " << t;
        continue;
      }
      const double e = c.expected[t] * kDraws;
      chi2 += (counts[t] - e) * (counts[t] - e) / e;
    }
    // 99.9% quantile of chi-square with 3 degrees of freedom (the looser bound
    // also covers 1 degree of freedom).
    EXPECT_LT(chi2, 16.27) << c.name;
  }
}

// A plain reference for the chain: sort the whole vocabulary, then top-k,
// top-p, min-p, temperature and softmax by their definitions.
std::vector<Candidate> reference_chain(const std::vector<float>& logits, const SamplingParams& p) {
  std::vector<std::pair<float, int32_t>> all;
  for (size_t i = 0; i < logits.size(); ++i) all.emplace_back(logits[i], static_cast<int32_t>(i));
  std::sort(all.begin(), all.end(),
            [](auto& a, auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
  if (p.top_k > 0 && static_cast<size_t>(p.top_k) < all.size()) all.resize(static_cast<size_t>(p.top_k));
  const double max = all[0].first;
  double z = 0.0;
  for (auto& [l, id] : all) z += std::exp(l - max);
  if (p.top_p < 1.0f) {
    double cum = 0.0;
    size_t keep = all.size();
    for (size_t i = 0; i < all.size(); ++i) {
      cum += std::exp(all[i].first - max) / z;
      if (cum >= p.top_p) {
        keep = i + 1;
        break;
      }
    }
    all.resize(keep);
  }
  std::vector<Candidate> out;
  for (auto& [l, id] : all) {
    if (p.min_p > 0.0f && std::exp(l - max) < p.min_p) continue;
    out.push_back({id, l / p.temperature, 0.0f});
  }
  double zt = 0.0;
  for (const Candidate& c : out) zt += std::exp(c.logit - out[0].logit);
  for (Candidate& c : out) c.p = static_cast<float>(std::exp(c.logit - out[0].logit) / zt);
  return out;
}

TEST(Sampler, LargeVocabularyMatchesTheSortingReference) {
  std::mt19937_64 gen(2024);
  const struct {
    int32_t top_k;
    float top_p, min_p, temperature;
  } cases[] = {
      {40, 0.95f, 0.05f, 0.8f}, {0, 0.95f, 0.05f, 0.8f},   {0, 0.9f, 0.0f, 1.0f},   {0, 0.5f, 0.0f, 1.3f},
      {0, 1.0f, 0.1f, 0.7f},    {1000, 0.99f, 0.0f, 1.0f}, {0, 0.999f, 0.0f, 1.0f}, {5, 1.0f, 0.0f, 2.0f},
  };
  for (const auto& c : cases) {
    for (float scale : {1.0f, 3.0f, 8.0f}) {
      const std::vector<float> logits = random_logits(gen, 49152, scale);
      SamplingParams p = neutral();
      p.top_k = c.top_k;
      p.top_p = c.top_p;
      p.min_p = c.min_p;
      p.temperature = c.temperature;
      Sampler s = make(p);
      const std::vector<Candidate> got = s.candidates(logits);
      const std::vector<Candidate> want = reference_chain(logits, p);
      ASSERT_EQ(got.size(), want.size()) << "top_k " << c.top_k << " top_p " << c.top_p << " scale " << scale;
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_EQ(got[i].id, want[i].id) << i;
        ASSERT_NEAR(got[i].p, want[i].p, 1e-5) << i;
      }
    }
  }
}

}  // namespace
}  // namespace hearth
