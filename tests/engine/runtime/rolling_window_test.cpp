#include "engine/metrics/rolling_window.h"

#include <gtest/gtest.h>

namespace hearth::metrics {
namespace {

TEST(SampleWindow, NearestRankPercentiles) {
  SampleWindow w(100);
  for (int i = 100; i >= 1; --i) w.add(i);  // 1..100 in any order
  const LatencySummary s = w.summary();
  EXPECT_EQ(s.count, 100);
  EXPECT_DOUBLE_EQ(s.p50, 50);
  EXPECT_DOUBLE_EQ(s.p95, 95);
  EXPECT_DOUBLE_EQ(s.p99, 99);
  EXPECT_DOUBLE_EQ(w.mean(), 50.5);
}

TEST(SampleWindow, KeepsOnlyTheLastSamples) {
  SampleWindow w(3);
  for (double v : {100.0, 1.0, 2.0, 3.0}) w.add(v);
  const LatencySummary s = w.summary();
  EXPECT_EQ(s.count, 3);
  EXPECT_DOUBLE_EQ(s.p99, 3);
  EXPECT_DOUBLE_EQ(w.mean(), 2);
  EXPECT_EQ(SampleWindow(4).summary().count, 0);
}

TEST(RateWindow, TokensOverTheActiveSpanOfTheWindow) {
  using std::chrono::milliseconds;
  RateWindow r(milliseconds(1000));
  const Clock::time_point t0{};
  EXPECT_DOUBLE_EQ(r.rate(), 0);
  r.add(t0, t0 + milliseconds(100), 10);
  EXPECT_DOUBLE_EQ(r.rate(), 100);  // 10 tokens in 0.1 s
  r.add(t0 + milliseconds(100), t0 + milliseconds(500), 30);
  EXPECT_DOUBLE_EQ(r.rate(), 80);                              // 40 tokens in 0.5 s
  r.add(t0 + milliseconds(1500), t0 + milliseconds(2000), 5);  // the first two left the window
  EXPECT_DOUBLE_EQ(r.rate(), 10);
}

}  // namespace
}  // namespace hearth::metrics
