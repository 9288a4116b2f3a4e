// Quantizers for the 32-element block types and the float types.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>

#include "kernels/cpu/fp16.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/quantize.h"

namespace hearth::kernels {
namespace {

// The element of largest magnitude, with its sign.
float signed_absmax(const float* x, int n) {
  float best = 0.0f;
  for (int j = 0; j < n; ++j) {
    if (std::fabs(x[j]) > std::fabs(best)) best = x[j];
  }
  return best;
}

float inverse_or_zero(float d) {
  return d != 0.0f ? 1.0f / d : 0.0f;
}

uint8_t clamp_u8(int v, int hi) {
  return static_cast<uint8_t>(std::clamp(v, 0, hi));
}

// Symmetric 4- or 5-bit quantization (offset 2^(bits-1)) of one block; q gets 32 codes.
float quantize_symmetric(const float* x, int half_range, uint8_t* q) {
  const float d = signed_absmax(x, kQK32) / static_cast<float>(-half_range);
  const float id = inverse_or_zero(d);
  for (int j = 0; j < kQK32; ++j) q[j] = clamp_u8(round_nearest(x[j] * id) + half_range, 2 * half_range - 1);
  return d;
}

// Asymmetric (min, scale) quantization of one block to `levels` steps.
void quantize_affine(const float* x, int levels, uint8_t* q, float* d_out, float* m_out) {
  const auto [lo, hi] = std::minmax_element(x, x + kQK32);
  const float d = (*hi - *lo) / static_cast<float>(levels);
  const float id = inverse_or_zero(d);
  for (int j = 0; j < kQK32; ++j) q[j] = clamp_u8(round_nearest((x[j] - *lo) * id), levels);
  *d_out = d;
  *m_out = *lo;
}

void pack_nibbles(const uint8_t* q, uint8_t* qs) {
  for (int j = 0; j < kQK32 / 2; ++j) qs[j] = static_cast<uint8_t>((q[j] & 15) | ((q[j + 16] & 15) << 4));
}

void pack_high_bits(const uint8_t* q, uint8_t* qh_bytes) {
  uint32_t qh = 0;
  for (int j = 0; j < kQK32; ++j) qh |= static_cast<uint32_t>((q[j] >> 4) & 1) << j;
  std::memcpy(qh_bytes, &qh, sizeof(qh));
}

}  // namespace

void quantize_row_f32(const float* src, void* dst, int64_t n) {
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void quantize_row_f16(const float* src, void* dst, int64_t n) {
  f32_to_fp16_row(src, static_cast<uint16_t*>(dst), n);
}

void quantize_row_bf16(const float* src, void* dst, int64_t n) {
  f32_to_bf16_row(src, static_cast<uint16_t*>(dst), n);
}

void quantize_row_q4_0(const float* src, void* dst, int64_t n) {
  assert(n % kQK32 == 0);
  auto* b = static_cast<BlockQ4_0*>(dst);
  for (int64_t i = 0; i < n / kQK32; ++i, src += kQK32) {
    uint8_t q[kQK32];
    b[i].d = f32_to_fp16(quantize_symmetric(src, 8, q));
    pack_nibbles(q, b[i].qs);
  }
}

void quantize_row_q4_1(const float* src, void* dst, int64_t n) {
  assert(n % kQK32 == 0);
  auto* b = static_cast<BlockQ4_1*>(dst);
  for (int64_t i = 0; i < n / kQK32; ++i, src += kQK32) {
    uint8_t q[kQK32];
    float d = 0.0f, m = 0.0f;
    quantize_affine(src, 15, q, &d, &m);
    b[i].d = f32_to_fp16(d);
    b[i].m = f32_to_fp16(m);
    pack_nibbles(q, b[i].qs);
  }
}

void quantize_row_q5_0(const float* src, void* dst, int64_t n) {
  assert(n % kQK32 == 0);
  auto* b = static_cast<BlockQ5_0*>(dst);
  for (int64_t i = 0; i < n / kQK32; ++i, src += kQK32) {
    uint8_t q[kQK32];
    b[i].d = f32_to_fp16(quantize_symmetric(src, 16, q));
    pack_nibbles(q, b[i].qs);
    pack_high_bits(q, b[i].qh);
  }
}

void quantize_row_q5_1(const float* src, void* dst, int64_t n) {
  assert(n % kQK32 == 0);
  auto* b = static_cast<BlockQ5_1*>(dst);
  for (int64_t i = 0; i < n / kQK32; ++i, src += kQK32) {
    uint8_t q[kQK32];
    float d = 0.0f, m = 0.0f;
    quantize_affine(src, 31, q, &d, &m);
    b[i].d = f32_to_fp16(d);
    b[i].m = f32_to_fp16(m);
    pack_nibbles(q, b[i].qs);
    pack_high_bits(q, b[i].qh);
  }
}

namespace {

// Q8 codes of one block: d = max|x| / 127; returns d and the sum of the codes.
float quantize_q8(const float* x, int n, int8_t* q, int* sum) {
  float amax = 0.0f;
  for (int j = 0; j < n; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127.0f;
  const float id = inverse_or_zero(d);
  int s = 0;
  for (int j = 0; j < n; ++j) {
    q[j] = static_cast<int8_t>(round_nearest(x[j] * id));
    s += q[j];
  }
  *sum = s;
  return d;
}

}  // namespace

void quantize_row_q8_0(const float* src, void* dst, int64_t n) {
  assert(n % kQK32 == 0);
  auto* b = static_cast<BlockQ8_0*>(dst);
  for (int64_t i = 0; i < n / kQK32; ++i, src += kQK32) {
    int sum = 0;
    b[i].d = f32_to_fp16(quantize_q8(src, kQK32, b[i].qs, &sum));
  }
}

void quantize_row_q8_1(const float* src, void* dst, int64_t n) {
  assert(n % kQK32 == 0);
  auto* b = static_cast<BlockQ8_1*>(dst);
  for (int64_t i = 0; i < n / kQK32; ++i, src += kQK32) {
    int sum = 0;
    const float d = quantize_q8(src, kQK32, b[i].qs, &sum);
    b[i].d = f32_to_fp16(d);
    b[i].s = f32_to_fp16(d * static_cast<float>(sum));
  }
}

void quantize_row_q8_k(const float* src, void* dst, int64_t n) {
  assert(n % kQKK == 0);
  auto* b = static_cast<BlockQ8_K*>(dst);
  for (int64_t i = 0; i < n / kQKK; ++i, src += kQKK) {
    int sum = 0;
    b[i].d = quantize_q8(src, kQKK, b[i].qs, &sum);
    for (int g = 0; g < kQKK / 16; ++g) {
      int s = 0;
      for (int j = 0; j < 16; ++j) s += b[i].qs[16 * g + j];
      b[i].bsums[g] = static_cast<int16_t>(s);
    }
  }
}

}  // namespace hearth::kernels
