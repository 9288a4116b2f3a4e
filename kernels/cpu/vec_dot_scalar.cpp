// Portable reference dot products: integer sums per block, one f32 scaling per
// block (or sub-block), as the SIMD versions do, so they differ from these only
// by f32 summation order.
#include <cassert>
#include <cstring>

#include "kernels/cpu/dequantize.h"
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/vec_dot.h"

namespace hearth::kernels::scalar {
namespace {

template <typename Block>
const Block* as_blocks(const void* p) {
  return static_cast<const Block*>(p);
}

// Element j (< 32) of a legacy 4/5-bit block, before offset: low nibbles are
// elements 0..15, high nibbles 16..31; qh (may be 0) gives the 5th bit.
int legacy_code(const uint8_t* qs, uint32_t qh, int j) {
  const int nib = j < 16 ? (qs[j] & 15) : (qs[j - 16] >> 4);
  return nib | static_cast<int>(((qh >> j) & 1u) << 4);
}

uint32_t load_qh(const uint8_t* qh) {
  uint32_t v = 0;
  std::memcpy(&v, qh, sizeof(v));
  return v;
}

int dot_codes(const uint8_t* qs, uint32_t qh, int offset, const int8_t* a) {
  int sum = 0;
  for (int j = 0; j < kQK32; ++j) sum += (legacy_code(qs, qh, j) - offset) * a[j];
  return sum;
}

}  // namespace

float vec_dot_f32(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const float*>(w);
  const auto* y = static_cast<const float*>(a);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * y[i];
  return static_cast<float>(sum);
}

float vec_dot_f16(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const uint16_t*>(w);
  const auto* y = static_cast<const float*>(a);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(fp16_to_f32(x[i])) * y[i];
  return static_cast<float>(sum);
}

float vec_dot_bf16(int64_t n, const void* w, const void* a) {
  const auto* x = static_cast<const uint16_t*>(w);
  const auto* y = static_cast<const float*>(a);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(bf16_to_f32(x[i])) * y[i];
  return static_cast<float>(sum);
}

float vec_dot_q4_0_q8_0(int64_t n, const void* w, const void* a) {
  const auto* x = as_blocks<BlockQ4_0>(w);
  const auto* y = as_blocks<BlockQ8_0>(a);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK32; ++i) {
    const int s = dot_codes(x[i].qs, 0, 8, y[i].qs);
    sum += fp16_to_f32(x[i].d) * fp16_to_f32(y[i].d) * static_cast<float>(s);
  }
  return sum;
}

float vec_dot_q4_1_q8_1(int64_t n, const void* w, const void* a) {
  const auto* x = as_blocks<BlockQ4_1>(w);
  const auto* y = as_blocks<BlockQ8_1>(a);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK32; ++i) {
    const int s = dot_codes(x[i].qs, 0, 0, y[i].qs);
    sum +=
        fp16_to_f32(x[i].d) * fp16_to_f32(y[i].d) * static_cast<float>(s) + fp16_to_f32(x[i].m) * fp16_to_f32(y[i].s);
  }
  return sum;
}

float vec_dot_q5_0_q8_0(int64_t n, const void* w, const void* a) {
  const auto* x = as_blocks<BlockQ5_0>(w);
  const auto* y = as_blocks<BlockQ8_0>(a);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK32; ++i) {
    const int s = dot_codes(x[i].qs, load_qh(x[i].qh), 16, y[i].qs);
    sum += fp16_to_f32(x[i].d) * fp16_to_f32(y[i].d) * static_cast<float>(s);
  }
  return sum;
}

float vec_dot_q5_1_q8_1(int64_t n, const void* w, const void* a) {
  const auto* x = as_blocks<BlockQ5_1>(w);
  const auto* y = as_blocks<BlockQ8_1>(a);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK32; ++i) {
    const int s = dot_codes(x[i].qs, load_qh(x[i].qh), 0, y[i].qs);
    sum +=
        fp16_to_f32(x[i].d) * fp16_to_f32(y[i].d) * static_cast<float>(s) + fp16_to_f32(x[i].m) * fp16_to_f32(y[i].s);
  }
  return sum;
}

float vec_dot_q8_0_q8_0(int64_t n, const void* w, const void* a) {
  const auto* x = as_blocks<BlockQ8_0>(w);
  const auto* y = as_blocks<BlockQ8_0>(a);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQK32; ++i) {
    int s = 0;
    for (int j = 0; j < kQK32; ++j) s += x[i].qs[j] * y[i].qs[j];
    sum += fp16_to_f32(x[i].d) * fp16_to_f32(y[i].d) * static_cast<float>(s);
  }
  return sum;
}

namespace {

// Sum over the 8 sub-blocks of sc * (codes . activations) and of m * bsum.
// Codes of element e: low nibble / high nibble per the Q4_K chunk layout, plus
// the 5th bit from qh when qh is not null.
void k_sums(const uint8_t* scales, const uint8_t* qs, const uint8_t* qh, const BlockQ8_K& y, int* sumi, int* summ) {
  *sumi = 0;
  *summ = 0;
  for (int j = 0; j < 8; ++j) {
    uint8_t sc = 0, m = 0;
    k_scale_min(scales, j, &sc, &m);
    const int c = j / 2, high = j % 2;
    int s = 0;
    for (int l = 0; l < 32; ++l) {
      int q = high ? (qs[32 * c + l] >> 4) : (qs[32 * c + l] & 15);
      if (qh != nullptr) q |= ((qh[l] >> j) & 1) << 4;
      s += q * y.qs[32 * j + l];
    }
    *sumi += sc * s;
    *summ += m * (y.bsums[2 * j] + y.bsums[2 * j + 1]);
  }
}

}  // namespace

float vec_dot_q4_k_q8_k(int64_t n, const void* w, const void* a) {
  const auto* x = as_blocks<BlockQ4_K>(w);
  const auto* y = as_blocks<BlockQ8_K>(a);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQKK; ++i) {
    int sumi = 0, summ = 0;
    k_sums(x[i].scales, x[i].qs, nullptr, y[i], &sumi, &summ);
    sum +=
        y[i].d * (fp16_to_f32(x[i].d) * static_cast<float>(sumi) - fp16_to_f32(x[i].dmin) * static_cast<float>(summ));
  }
  return sum;
}

float vec_dot_q5_k_q8_k(int64_t n, const void* w, const void* a) {
  const auto* x = as_blocks<BlockQ5_K>(w);
  const auto* y = as_blocks<BlockQ8_K>(a);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQKK; ++i) {
    int sumi = 0, summ = 0;
    k_sums(x[i].scales, x[i].qs, x[i].qh, y[i], &sumi, &summ);
    sum +=
        y[i].d * (fp16_to_f32(x[i].d) * static_cast<float>(sumi) - fp16_to_f32(x[i].dmin) * static_cast<float>(summ));
  }
  return sum;
}

float vec_dot_q6_k_q8_k(int64_t n, const void* w, const void* a) {
  const auto* x = as_blocks<BlockQ6_K>(w);
  const auto* y = as_blocks<BlockQ8_K>(a);
  float sum = 0.0f;
  for (int64_t i = 0; i < n / kQKK; ++i) {
    int sumi = 0;
    for (int e0 = 0; e0 < kQKK; e0 += 16) {
      int s = 0;
      for (int e = e0; e < e0 + 16; ++e) {
        const int h = e / 128, k = (e % 128) / 32, l = e % 32;
        const int low = (x[i].ql[64 * h + 32 * (k & 1) + l] >> (4 * (k >> 1))) & 15;
        const int high = (x[i].qh[32 * h + l] >> (2 * k)) & 3;
        s += ((low | (high << 4)) - 32) * y[i].qs[e];
      }
      sumi += x[i].scales[e0 / 16] * s;
    }
    sum += fp16_to_f32(x[i].d) * y[i].d * static_cast<float>(sumi);
  }
  return sum;
}

namespace {

// The reference multi-row dot: one call of the one-row dot per activation row.
template <float (*Dot)(int64_t, const void*, const void*)>
void each_row(int64_t n, const void* w, const void* a, size_t a_stride, int n_a, float* out) {
  for (int j = 0; j < n_a; ++j) out[j] = Dot(n, w, static_cast<const uint8_t*>(a) + static_cast<size_t>(j) * a_stride);
}

}  // namespace

#define HEARTH_SCALAR_ROWS(name)                                                                    \
  void name##_rows(int64_t n, const void* w, const void* a, size_t a_stride, int n_a, float* out) { \
    each_row<name>(n, w, a, a_stride, n_a, out);                                                    \
  }
HEARTH_SCALAR_ROWS(vec_dot_f32)
HEARTH_SCALAR_ROWS(vec_dot_f16)
HEARTH_SCALAR_ROWS(vec_dot_bf16)
HEARTH_SCALAR_ROWS(vec_dot_q4_0_q8_0)
HEARTH_SCALAR_ROWS(vec_dot_q4_1_q8_1)
HEARTH_SCALAR_ROWS(vec_dot_q5_0_q8_0)
HEARTH_SCALAR_ROWS(vec_dot_q5_1_q8_1)
HEARTH_SCALAR_ROWS(vec_dot_q8_0_q8_0)
HEARTH_SCALAR_ROWS(vec_dot_q4_k_q8_k)
HEARTH_SCALAR_ROWS(vec_dot_q5_k_q8_k)
HEARTH_SCALAR_ROWS(vec_dot_q6_k_q8_k)
#undef HEARTH_SCALAR_ROWS

namespace {

// The reference refined multi-row dot: per row, the one-row dot, then the
// one-block dot of each weight block with the row's residual block, in block
// order.
template <float (*Dot)(int64_t, const void*, const void*), size_t kWBytes, size_t kABytes>
void each_row_refined(int64_t n, const void* w, const void* a, size_t a_stride, const void* lo, size_t lo_stride,
                      const uint8_t* mask, int n_a, float* out) {
  const auto* wb = static_cast<const uint8_t*>(w);
  for (int j = 0; j < n_a; ++j) {
    float sum = Dot(n, w, static_cast<const uint8_t*>(a) + static_cast<size_t>(j) * a_stride);
    const auto* l = static_cast<const uint8_t*>(lo) + static_cast<size_t>(j) * lo_stride;
    for (int64_t i = 0; i < n / 32; ++i) {
      if ((mask[i] >> j) & 1u)
        sum += Dot(32, wb + static_cast<size_t>(i) * kWBytes, l + static_cast<size_t>(i) * kABytes);
    }
    out[j] = sum;
  }
}

}  // namespace

#define HEARTH_SCALAR_REFINED(name, W, A)                                                                              \
  void name##_rows_refined(int64_t n, const void* w, const void* a, size_t a_stride, const void* lo, size_t lo_stride, \
                           const uint8_t* mask, int n_a, float* out) {                                                 \
    each_row_refined<name, sizeof(W), sizeof(A)>(n, w, a, a_stride, lo, lo_stride, mask, n_a, out);                    \
  }
HEARTH_SCALAR_REFINED(vec_dot_q4_0_q8_0, BlockQ4_0, BlockQ8_0)
HEARTH_SCALAR_REFINED(vec_dot_q4_1_q8_1, BlockQ4_1, BlockQ8_1)
HEARTH_SCALAR_REFINED(vec_dot_q5_0_q8_0, BlockQ5_0, BlockQ8_0)
HEARTH_SCALAR_REFINED(vec_dot_q5_1_q8_1, BlockQ5_1, BlockQ8_1)
HEARTH_SCALAR_REFINED(vec_dot_q8_0_q8_0, BlockQ8_0, BlockQ8_0)
#undef HEARTH_SCALAR_REFINED

}  // namespace hearth::kernels::scalar
