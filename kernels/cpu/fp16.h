// IEEE half and bfloat16 conversions: exact scalar versions (round to nearest
// even, subnormals and NaN handled) and row conversions that use F16C when the
// CPU has it (same results bit for bit).
//
// Not to be included by the SIMD translation units (kernels/cpu/*_avx*.cpp):
// their flags would leak into these inline functions.
#pragma once

#include <bit>
#include <cstdint>

namespace hearth::kernels {

inline float fp16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exact in f32.
    const float mag = static_cast<float>(mant) * 0x1p-24f;
    return std::bit_cast<float>(sign | std::bit_cast<uint32_t>(mag));
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
}

inline uint16_t f32_to_fp16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mag = x & 0x7fffffffu;
  if (mag > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);   // NaN, quiet
  if (mag >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (mag < 0x38800000u) {
    // Below the smallest normal half: adding 0.5 aligns the f32 ulp with the
    // half subnormal step (2^-24), so the hardware's rounding is RNE for us.
    const float sum = std::bit_cast<float>(mag) + 0.5f;
    return static_cast<uint16_t>(sign | (std::bit_cast<uint32_t>(sum) - 0x3f000000u));
  }
  const uint32_t odd = (mag >> 13) & 1u;
  mag += 0xc8000fffu + odd;  // rebias exponent 127 -> 15 and round to nearest even
  return static_cast<uint16_t>(sign | (mag >> 13));
}

inline float bf16_to_f32(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

inline uint16_t f32_to_bf16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  const uint32_t rounded = x + 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(rounded >> 16);
}

// Row conversions (n elements; F16C path when available).
void fp16_to_f32_row(const uint16_t* src, float* dst, int64_t n);
void f32_to_fp16_row(const float* src, uint16_t* dst, int64_t n);
void bf16_to_f32_row(const uint16_t* src, float* dst, int64_t n);
void f32_to_bf16_row(const float* src, uint16_t* dst, int64_t n);

// The scalar versions, exposed for tests comparing the two paths.
void fp16_to_f32_row_scalar(const uint16_t* src, float* dst, int64_t n);
void f32_to_fp16_row_scalar(const float* src, uint16_t* dst, int64_t n);

}  // namespace hearth::kernels
