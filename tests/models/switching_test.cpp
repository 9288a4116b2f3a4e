// Switching model and weight format without restarting leaks nothing and
// changes nothing: the default model (SmolLM2, Q4_1 as stored and converted
// to Q4_0 at load) and Gemma 3 270M (Q4_K_M as stored and converted to
// Q4_0), opened in turn 20 times through models::open_engine as the app does.
// After each switch the process's resident memory is back at what it was
// after the first round (within kTolerance), and each configuration's greedy
// tokens are the first round's.
#include <gtest/gtest.h>

#include <iostream>

#include "models/catalog.h"
#include "switching.h"

namespace hearth::models::test {
namespace {

// Allocator and page-cache slack that is not a leak: an 8B model's leak per
// switch would be gigabytes; one KV pool of these models is 10-90 MB.
constexpr std::size_t kTolerance = std::size_t{24} << 20;

SwitchTarget target(const std::string& model, const std::string& quant, const std::string& label) {
  SwitchTarget t;
  t.model = model;
  t.label = label;
  t.config.device = "cpu";
  t.config.quant = quant;
  t.config.context_length = 512;
  t.config.max_sequences = 4;
  t.config.threads = 2;
  return t;
}

TEST(ModelSwitching, TwentySwitchesOnTheCpuLeakNothingAndGiveTheSameTokens) {
  const std::string gemma = "gemma3-270m-q4_k_m";
  if (!resolve_model("default")) GTEST_SKIP() << "the default model is not installed in " << models_dir();
  if (!resolve_model(gemma)) GTEST_SKIP() << gemma << " is not installed in " << models_dir();
  const std::vector<SwitchTarget> targets = {target("default", "", "SmolLM2 Q4_1"), target(gemma, "", "Gemma 3 Q4_K_M"),
                                             target("default", "Q4_0", "SmolLM2 -> Q4_0"),
                                             target(gemma, "Q4_0", "Gemma 3 -> Q4_0")};
  // One round to warm up, then five rounds of the four: 20 switches measured.
  auto report = switch_rounds(targets, 6, 8, resident_bytes);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_TRUE(report->mismatches.empty()) << report->mismatches.front();
  ASSERT_EQ(report->after_each.size(), 20u);
  std::size_t worst = 0;
  for (std::size_t i = 0; i < report->after_each.size(); ++i) {
    const std::size_t now = report->after_each[i];
    worst = std::max(worst, now);
    EXPECT_LE(now, report->baseline + kTolerance)
        << "switch " << i + 1 << " (" << targets[i % targets.size()].label << "): resident " << (now >> 20) << " MiB, "
        << (report->baseline >> 20) << " MiB after the first round";
  }
  ASSERT_EQ(report->while_loaded.size(), 24u);
  for (const std::size_t loaded : report->while_loaded) {
    EXPECT_GT(loaded, report->baseline + (std::size_t{32} << 20)) << "a loaded model's weights and KV pool are resident";
  }
  // The converted formats really ran converted: their tokens need not equal the file's own.
  for (const auto& tokens : report->first_outputs) EXPECT_EQ(tokens.size(), 8u);
  std::cout << "resident after the first round " << (report->baseline >> 20) << " MiB, at most " << (worst >> 20)
            << " MiB over the 20 switches\n";
}

}  // namespace
}  // namespace hearth::models::test
