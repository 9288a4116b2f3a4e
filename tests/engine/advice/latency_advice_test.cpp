// The latency advice on synthetic latency series: table-driven verdicts, and
// the suggestions' expected gains against the documented gain model.
#include "engine/advice/latency_advice.h"

#include <gtest/gtest.h>

#include <vector>

namespace hearth::advice {
namespace {

// n samples at `base` ms, with `spikes` of them (spread evenly from `from` on) at `spike` ms.
std::vector<double> series(std::size_t n, double base, std::size_t from = 0, std::size_t spikes = 0, double spike = 0) {
  std::vector<double> v(n, base);
  for (std::size_t i = 0; i < spikes && from + i < n; ++i) v[from + i] = spike;
  return v;
}

// 100 samples at 15 ms, two of them (one in each half) at 90 ms.
std::vector<double> two_spikes() {
  std::vector<double> v = series(100, 15);
  v[40] = v[70] = 90;
  return v;
}

struct VerdictCase {
  const char* what;
  std::vector<double> window;
  double target;
  Advice::Verdict verdict;
  double measured;
};

TEST(LatencyAdvice, Verdicts) {
  const std::vector<VerdictCase> cases = {
      {"too few samples", series(10, 50), 20, Advice::Verdict::kNotEnoughData, 0},
      {"steady under the target", series(100, 15), 20, Advice::Verdict::kMeetsTarget, 15},
      {"one spike in 100 is under the p99", series(100, 15, 40, 1, 90), 20, Advice::Verdict::kMeetsTarget, 15},
      {"spikes in both halves", two_spikes(), 20, Advice::Verdict::kOverTarget, 90},
      {"spikes early, then calm", series(100, 15, 0, 5, 90), 20, Advice::Verdict::kTransient, 90},
      {"steadily above", series(64, 30), 20, Advice::Verdict::kOverTarget, 30},
      {"exactly at the target", series(64, 20), 20, Advice::Verdict::kMeetsTarget, 20},
  };
  for (const VerdictCase& c : cases) {
    const Advice a = advise({LatencyMetric::kInterTokenP99, c.target}, c.window, CurrentSetup{});
    EXPECT_EQ(a.verdict, c.verdict) << c.what;
    EXPECT_DOUBLE_EQ(a.measured_ms, c.measured) << c.what;
    EXPECT_EQ(a.suggestions.empty(), c.verdict != Advice::Verdict::kOverTarget) << c.what;
  }
}

TEST(LatencyAdvice, PercentileIsNearestRank) {
  const std::vector<double> v = {5, 1, 4, 2, 3};
  EXPECT_DOUBLE_EQ(percentile(v, 0.5), 3);
  EXPECT_DOUBLE_EQ(percentile(v, 0.99), 5);
  EXPECT_DOUBLE_EQ(percentile(v, 0.2), 1);
  EXPECT_DOUBLE_EQ(percentile({}, 0.5), 0);
}

TEST(LatencyAdvice, FormatLadder) {
  EXPECT_EQ(coarser_format("F16"), "Q8_0");
  EXPECT_EQ(coarser_format("Q8_0"), "Q6_K");
  EXPECT_EQ(coarser_format("Q6_K"), "Q5_K_M");
  EXPECT_EQ(coarser_format("Q5_K_M"), "Q4_K_M");
  EXPECT_EQ(coarser_format("Q4_1"), "");  // nothing lighter on the ladder
  EXPECT_EQ(coarser_format("Q4_K_M"), "");
  EXPECT_EQ(coarser_format("nonsense"), "");
}

struct GainCase {
  const char* what;
  LatencyMetric metric;
  CurrentSetup setup;
  double target;
  const char* change;  // the recommended change
  const char* to;
  double factor;
};

TEST(LatencyAdvice, RecommendsTheLightestChangeThatMeetsTheTarget) {
  CurrentSetup cuda;
  cuda.cuda = true;
  CurrentSetup cpu;  // Q8_0, f16 KV on the CPU
  CurrentSetup batched = cpu;
  batched.streams = 8;
  batched.weight_format = "Q4_K_M";
  CurrentSetup long_ctx = cpu;
  long_ctx.weight_format = "Q4_0";
  long_ctx.context_length = 16384;
  const std::vector<GainCase> cases = {
      // 30 ms measured; fp8 KV gives 1 - 0.15/2 = 0.925 -> 27.75 ms.
      {"fp8 KV is enough", LatencyMetric::kInterTokenP99, cuda, 28, "kv_precision", "fp8", 0.925},
      // Needs more than fp8: Q8_0 -> Q6_K gives 1 - 0.75 (1 - 6.5625/8.5).
      {"weights next", LatencyMetric::kInterTokenP99, cuda, 26, "weight_format", "Q6_K", 1 - 0.75 * (1 - 6.5625 / 8.5)},
      // On the CPU the KV cache's compact form is q8_0: the same halving of the attention's bytes.
      {"cpu q8_0 KV", LatencyMetric::kInterTokenP99, cpu, 29, "kv_precision", "q8_0", 0.925},
      // More than the KV cache can give on the CPU: the weights.
      {"cpu weights next", LatencyMetric::kInterTokenP99, cpu, 27, "weight_format", "Q6_K",
       1 - 0.75 * (1 - 6.5625 / 8.5)},
      // Q4_K_M has nothing lighter: halve the 8 streams, 1 - 0.25 / 2.
      {"fewer streams", LatencyMetric::kInterTokenP99, batched, 27, "streams", "4", 0.875},
      // TTFT with a 16k context: halving it halves the TTFT of prompts that fill it.
      {"shorter context for TTFT", LatencyMetric::kTtftP99, long_ctx, 16, "context_length", "8192", 0.5},
  };
  for (const GainCase& c : cases) {
    const Advice a = advise({c.metric, c.target}, series(64, 30), c.setup);
    ASSERT_EQ(a.verdict, Advice::Verdict::kOverTarget) << c.what;
    ASSERT_TRUE(a.recommended.has_value()) << c.what;
    EXPECT_EQ(a.recommended->change, c.change) << c.what;
    EXPECT_EQ(a.recommended->to, c.to) << c.what;
    EXPECT_NEAR(a.recommended->factor, c.factor, 1e-9) << c.what;
    EXPECT_NEAR(a.recommended->predicted_ms, 30 * c.factor, 1e-9) << c.what;
    EXPECT_NEAR(a.recommended->gain_ms, 30 * (1 - c.factor), 1e-9) << c.what;
    EXPECT_TRUE(a.recommended->meets_target) << c.what;
  }
}

TEST(LatencyAdvice, WhenNothingMeetsItTheBiggestGainIsRecommended) {
  CurrentSetup s;
  s.cuda = true;
  s.weight_format = "F16";
  const Advice a = advise({LatencyMetric::kInterTokenP99, 5}, series(64, 30), s);
  ASSERT_TRUE(a.recommended.has_value());
  EXPECT_FALSE(a.recommended->meets_target);
  EXPECT_EQ(a.recommended->change, "weight_format");  // F16 -> Q8_0 removes the most
  EXPECT_EQ(a.recommended->to, "Q8_0");
  for (const Suggestion& x : a.suggestions) EXPECT_LE(x.gain_ms, a.recommended->gain_ms + 1e-12);
}

}  // namespace
}  // namespace hearth::advice
