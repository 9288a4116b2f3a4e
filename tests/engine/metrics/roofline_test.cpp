// The roofline maths (engine/metrics/roofline.h) on exact, hand-computed cases.
#include <gtest/gtest.h>

#include "engine/metrics/roofline.h"

namespace hearth::metrics {
namespace {

struct Case {
  const char* what;
  double bytes, flops, duration_us;
  DeviceCeilings ceilings;
  double bytes_per_s, flops_per_s, bandwidth_fraction, compute_fraction, ceiling_fraction;
};

TEST(Roofline, AchievedRatesAndFractionsOfTheCeilings) {
  const DeviceCeilings roofs{100e9, 1e12, "test"};  // 100 GB/s, 1 TFLOP/s
  const Case cases[] = {
      // 1 MB in 20 us = 50 GB/s (half the bandwidth); 2 MFLOP in 20 us = 0.1 TFLOP/s (a tenth).
      {"memory bound", 1e6, 2e6, 20, roofs, 50e9, 0.1e12, 0.5, 0.1, 0.5},
      // 0.1 MB, 800 MFLOP in 1 ms: 0.1 GB/s, 0.8 TFLOP/s: compute binds.
      {"compute bound", 1e5, 8e8, 1000, roofs, 0.1e9, 0.8e12, 0.001, 0.8, 0.8},
      // Faster than the probe (data in cache): above 1, not clamped.
      {"above the probe", 3e6, 0, 10, roofs, 300e9, 0, 3.0, 0, 3.0},
      // No FLOP ceiling known: only the bandwidth fraction counts.
      {"no compute roof", 1e6, 1e9, 100, DeviceCeilings{10e9, 0, ""}, 10e9, 10e12, 1.0, 0, 1.0},
      {"no roofs at all", 1e6, 1e6, 100, DeviceCeilings{}, 10e9, 10e9, 0, 0, 0},
      {"zero duration", 1e6, 1e6, 0, roofs, 0, 0, 0, 0, 0},
      {"negative duration", 1e6, 1e6, -5, roofs, 0, 0, 0, 0, 0},
      {"nothing moved", 0, 0, 7, roofs, 0, 0, 0, 0, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const AchievedRate r = achieved_rate(c.bytes, c.flops, c.duration_us, c.ceilings);
    EXPECT_DOUBLE_EQ(r.bytes_per_s, c.bytes_per_s);
    EXPECT_DOUBLE_EQ(r.flops_per_s, c.flops_per_s);
    EXPECT_DOUBLE_EQ(r.bandwidth_fraction, c.bandwidth_fraction);
    EXPECT_DOUBLE_EQ(r.compute_fraction, c.compute_fraction);
    EXPECT_DOUBLE_EQ(r.ceiling_fraction, c.ceiling_fraction);
  }
}

}  // namespace
}  // namespace hearth::metrics
