#include "kernels/cpu/fp16.h"

#include <immintrin.h>

#include "kernels/cpu/cpu_features.h"

namespace hearth::kernels {
namespace {

__attribute__((target("avx,f16c"))) void fp16_to_f32_row_f16c(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) dst[i] = fp16_to_f32(src[i]);
}

__attribute__((target("avx,f16c"))) void f32_to_fp16_row_f16c(const float* src, uint16_t* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
  for (; i < n; ++i) dst[i] = f32_to_fp16(src[i]);
}

}  // namespace

void fp16_to_f32_row_scalar(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_f32(src[i]);
}

void f32_to_fp16_row_scalar(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = f32_to_fp16(src[i]);
}

void fp16_to_f32_row(const uint16_t* src, float* dst, int64_t n) {
  if (cpu_features().f16c) return fp16_to_f32_row_f16c(src, dst, n);
  fp16_to_f32_row_scalar(src, dst, n);
}

void f32_to_fp16_row(const float* src, uint16_t* dst, int64_t n) {
  if (cpu_features().f16c) return f32_to_fp16_row_f16c(src, dst, n);
  f32_to_fp16_row_scalar(src, dst, n);
}

void bf16_to_f32_row(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(src[i]);
}

void f32_to_bf16_row(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = f32_to_bf16(src[i]);
}

}  // namespace hearth::kernels
