// FP8 E4M3 (the OCP "e4m3fn" variant the GPUs implement): 1 sign bit, 4
// exponent bits (bias 7), 3 mantissa bits; no infinities, 0x7f/0xff are NaN,
// the largest finite value is 448. The CPU's fp8 KV cache and the host side of
// CUDA's (choosing the scales, tests) use these; they are the device
// conversions' twins: encoding rounds to nearest even and saturates to +-448
// (as __nv_cvt_float_to_fp8 with __NV_SATFINITE does).
#pragma once

#include <cmath>
#include <cstdint>

namespace hearth::kernels {

inline constexpr float kFp8E4M3Max = 448.0f;

// The fp8 KV cache keeps value = code * scale with one scale for the K (and
// one for the V) of a layer, chosen from the first values stored into that
// layer (the first prompt's prefill): the largest |value| seen then maps to
// 448 / kKvFp8Headroom, so later values up to kKvFp8Headroom times larger
// still fit (beyond that they saturate at the largest code). 0 when amax is
// 0 (nothing to calibrate on yet: the layer stays uncalibrated).
inline constexpr float kKvFp8Headroom = 2.0f;

inline float kv_fp8_scale(float amax) {
  return amax > 0.0f && std::isfinite(amax) ? amax * kKvFp8Headroom / kFp8E4M3Max : 0.0f;
}

inline float fp8_e4m3_to_f32(uint8_t b) {
  const float sign = (b & 0x80u) != 0 ? -1.0f : 1.0f;
  const int exp = (b >> 3) & 15;
  const int mant = b & 7;
  if (exp == 15 && mant == 7) return NAN;
  if (exp == 0) return sign * std::ldexp(static_cast<float>(mant), -9);  // subnormal: mant * 2^-9
  return sign * std::ldexp(1.0f + static_cast<float>(mant) / 8.0f, exp - 7);
}

inline uint8_t f32_to_fp8_e4m3(float f) {
  const uint8_t sign = std::signbit(f) ? 0x80u : 0u;
  const float a = std::fabs(f);
  if (std::isnan(f)) return static_cast<uint8_t>(sign | 0x7fu);
  if (a >= kFp8E4M3Max) return static_cast<uint8_t>(sign | 0x7eu);
  if (a < 0x1p-6f) {  // subnormal range: steps of 2^-9; 8 steps reach the smallest normal (code 8)
    return static_cast<uint8_t>(sign | static_cast<uint8_t>(std::nearbyint(a * 512.0f)));
  }
  int e = 0;
  const float frac = std::frexp(a, &e);  // a = frac * 2^e, frac in [0.5, 1)
  int mant = static_cast<int>(std::nearbyint((frac * 2.0f - 1.0f) * 8.0f));
  int exp = e - 1 + 7;
  if (mant == 8) mant = 0, ++exp;
  const int code = exp * 8 + mant;
  return static_cast<uint8_t>(sign | (code > 0x7e ? 0x7e : code));
}

}  // namespace hearth::kernels
