// EngineMetrics' step phases: the per-layer means and the forward mean of
// the steps they cover (a backend timing one step in several).
#include <gtest/gtest.h>

#include <vector>

#include "engine/metrics/engine_metrics.h"

namespace hearth::metrics {
namespace {

StepRecord step(double forward_ms, std::span<const double> layers) {
  StepRecord r;
  r.start = Clock::now();
  r.end = r.start;
  r.forward_ms = forward_ms;
  r.layer_ms = layers;
  return r;
}

TEST(EngineMetrics, LayerMeansComeWithTheForwardMeanOfTheTimedStepsOnly) {
  EngineMetrics m;
  const std::vector<double> prompt = {30.0, 50.0}, decode = {1.0, 2.0};
  m.record_step(step(100.0, prompt));  // a timed prompt step
  for (int i = 0; i < 6; ++i) m.record_step(step(4.0, {}));
  m.record_step(step(4.0, decode));  // a timed decode step
  m.publish(Gauges{});
  const EngineStats s = m.snapshot();
  EXPECT_DOUBLE_EQ(s.step.forward, (100.0 + 7 * 4.0) / 8);
  ASSERT_EQ(s.step.forward_by_layer.size(), 2u);
  EXPECT_DOUBLE_EQ(s.step.forward_by_layer[0], 15.5);
  EXPECT_DOUBLE_EQ(s.step.forward_by_layer[1], 26.0);
  // 41.5 ms of layers against a 16 ms forward mean, but 52 ms over the same steps.
  EXPECT_DOUBLE_EQ(s.step.forward_timed, 52.0);
}

TEST(EngineMetrics, NoTimedStepLeavesTheLayersEmpty) {
  EngineMetrics m;
  m.record_step(step(4.0, {}));
  m.publish(Gauges{});
  const EngineStats s = m.snapshot();
  EXPECT_TRUE(s.step.forward_by_layer.empty());
  EXPECT_DOUBLE_EQ(s.step.forward_timed, 0.0);
  EXPECT_DOUBLE_EQ(s.step.forward, 4.0);
}

}  // namespace
}  // namespace hearth::metrics
