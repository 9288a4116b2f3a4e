// f32 rows -> quantized rows. Weight types use plain round-to-nearest with one
// scale (and min) per block: good enough for tests and synthetic models, not
// an importance-weighted quantizer. Activation types (Q8_0, Q8_1, Q8_K) round
// to nearest even with d = max|x| / 127, so q is in [-127, 127]; their SIMD
// versions (vec_dot.h) give the same bytes.
// Every function: n elements, a multiple of the type's block_elems; dst holds
// row_bytes(type, n) bytes.
#pragma once

#include <bit>
#include <cstdint>

namespace hearth::kernels {

void quantize_row_f32(const float* src, void* dst, int64_t n);
void quantize_row_f16(const float* src, void* dst, int64_t n);
void quantize_row_bf16(const float* src, void* dst, int64_t n);
void quantize_row_q4_0(const float* src, void* dst, int64_t n);
void quantize_row_q4_1(const float* src, void* dst, int64_t n);
void quantize_row_q5_0(const float* src, void* dst, int64_t n);
void quantize_row_q5_1(const float* src, void* dst, int64_t n);
void quantize_row_q8_0(const float* src, void* dst, int64_t n);
void quantize_row_q8_1(const float* src, void* dst, int64_t n);
void quantize_row_q4_k(const float* src, void* dst, int64_t n);
void quantize_row_q5_k(const float* src, void* dst, int64_t n);
void quantize_row_q6_k(const float* src, void* dst, int64_t n);
void quantize_row_q8_k(const float* src, void* dst, int64_t n);

// Round to nearest, ties to even, for |x| < 2^22 (the same rounding as
// cvtps2dq under the default MXCSR, so scalar and SIMD quantizers agree).
inline int round_nearest(float x) {
  const float v = x + 12582912.0f;  // 1.5 * 2^23: the integer lands in the low mantissa bits
  return static_cast<int>(std::bit_cast<uint32_t>(v) & 0x7fffffu) - 0x400000;
}

}  // namespace hearth::kernels
