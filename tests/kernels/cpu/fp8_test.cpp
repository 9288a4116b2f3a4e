// Host FP8 E4M3 conversions (the reference for the device store path): runs
// without a GPU. Encoding is checked against a brute-force nearest search.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels/fp8.h"

namespace hearth::kernels {
namespace {

TEST(Fp8E4M3, DecodeKnownValues) {
  EXPECT_EQ(fp8_e4m3_to_f32(0x00), 0.0f);
  EXPECT_EQ(fp8_e4m3_to_f32(0x38), 1.0f);     // exponent 7, mantissa 0
  EXPECT_EQ(fp8_e4m3_to_f32(0x7e), 448.0f);   // largest finite
  EXPECT_EQ(fp8_e4m3_to_f32(0x01), 0x1p-9f);  // smallest subnormal
  EXPECT_EQ(fp8_e4m3_to_f32(0x08), 0x1p-6f);  // smallest normal
  EXPECT_EQ(fp8_e4m3_to_f32(0xb8), -1.0f);
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_f32(0x7f)));
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_f32(0xff)));
}

TEST(Fp8E4M3, RoundTripsEveryFiniteCode) {
  for (int c = 0; c < 256; ++c) {
    if ((c & 0x7f) == 0x7f) continue;
    EXPECT_EQ(f32_to_fp8_e4m3(fp8_e4m3_to_f32(static_cast<uint8_t>(c))), c) << "code " << c;
  }
}

// Nearest finite code of x's sign; ties to the even code (even mantissa).
uint8_t brute_force(float x) {
  const int base = std::signbit(x) ? 0x80 : 0;
  int best = base;
  float best_err = std::fabs(fp8_e4m3_to_f32(static_cast<uint8_t>(base)) - x);
  for (int c = base + 1; c < base + 0x7f; ++c) {
    const float err = std::fabs(fp8_e4m3_to_f32(static_cast<uint8_t>(c)) - x);
    if (err < best_err || (err == best_err && (c & 1) == 0)) best = c, best_err = err;
  }
  return static_cast<uint8_t>(best);
}

TEST(Fp8E4M3, EncodeRoundsToNearestEvenAndSaturates) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> mag(-12.0f, 9.5f);
  for (int i = 0; i < 20000; ++i) {
    const float x = (i % 2 ? -1.0f : 1.0f) * std::exp2(mag(rng));
    ASSERT_EQ(f32_to_fp8_e4m3(x), brute_force(x)) << "x = " << x;
  }
  // Exact midpoints: 1 + 1/16 lies between codes 0x38 (1.0) and 0x39 (1.125): even wins.
  EXPECT_EQ(f32_to_fp8_e4m3(1.0625f), 0x38);
  EXPECT_EQ(f32_to_fp8_e4m3(1.1875f), 0x3a);
  EXPECT_EQ(f32_to_fp8_e4m3(1000.0f), 0x7e);
  EXPECT_EQ(f32_to_fp8_e4m3(-1e30f), 0xfe);
  EXPECT_EQ(f32_to_fp8_e4m3(0x1p-11f), 0x00);  // below half the smallest subnormal
}

}  // namespace
}  // namespace hearth::kernels
