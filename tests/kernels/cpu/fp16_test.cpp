#include "kernels/cpu/fp16.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace hearth::kernels {
namespace {

TEST(Fp16, EveryHalfRoundTripsThroughFloat) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const auto half = static_cast<uint16_t>(h);
    const float f = fp16_to_f32(half);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(fp16_to_f32(f32_to_fp16(f)))) << h;
      continue;
    }
    EXPECT_EQ(f32_to_fp16(f), half) << h;
  }
}

TEST(Fp16, KnownValues) {
  EXPECT_EQ(fp16_to_f32(0x3c00), 1.0f);
  EXPECT_EQ(fp16_to_f32(0xc000), -2.0f);
  EXPECT_EQ(fp16_to_f32(0x7bff), 65504.0f);
  EXPECT_EQ(fp16_to_f32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f32_to_fp16(65520.0f), 0x7c00);                      // rounds to infinity
  EXPECT_EQ(f32_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie to even
  EXPECT_EQ(f32_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(f32_to_fp16(std::ldexp(1.0f, -25)), 0x0000);  // tie to even (zero)
  EXPECT_EQ(f32_to_fp16(std::ldexp(3.0f, -25)), 0x0002);
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16_to_f32(0xc040), -3.0f);
}

TEST(Fp16, RowPathsMatchScalarExactly) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bits;
  std::vector<float> src(1003);
  for (float& f : src) {
    do {
      f = std::bit_cast<float>(bits(rng));
    } while (std::isnan(f));
    if (bits(rng) % 2) f = std::ldexp(f - std::trunc(f), static_cast<int>(bits(rng) % 40) - 30);
  }
  std::vector<uint16_t> a(src.size()), b(src.size());
  f32_to_fp16_row(src.data(), a.data(), static_cast<int64_t>(src.size()));
  f32_to_fp16_row_scalar(src.data(), b.data(), static_cast<int64_t>(src.size()));
  EXPECT_EQ(a, b);
  std::vector<float> fa(src.size()), fb(src.size());
  fp16_to_f32_row(a.data(), fa.data(), static_cast<int64_t>(a.size()));
  fp16_to_f32_row_scalar(a.data(), fb.data(), static_cast<int64_t>(a.size()));
  for (size_t i = 0; i < fa.size(); ++i) EXPECT_EQ(std::bit_cast<uint32_t>(fa[i]), std::bit_cast<uint32_t>(fb[i]));
}

TEST(Bf16, RoundsToNearestEven) {
  for (uint32_t hi : {0x3f80u, 0x4049u, 0xc2f7u}) {
    const float base = std::bit_cast<float>(hi << 16);
    EXPECT_EQ(f32_to_bf16(std::bit_cast<float>((hi << 16) | 0x7fffu)), hi);
    EXPECT_EQ(f32_to_bf16(std::bit_cast<float>((hi << 16) | 0x8001u)), hi + 1);
    EXPECT_EQ(f32_to_bf16(std::bit_cast<float>((hi << 16) | 0x8000u)), (hi & 1) ? hi + 1 : hi);
    EXPECT_EQ(bf16_to_f32(f32_to_bf16(base)), base);
  }
}

}  // namespace
}  // namespace hearth::kernels
