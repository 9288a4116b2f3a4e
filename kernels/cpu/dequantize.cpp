#include "kernels/cpu/dequantize.h"

#include <cassert>
#include <cstring>

#include "kernels/cpu/fp16.h"
#include "kernels/cpu/quant_blocks.h"

namespace hearth::kernels {
namespace {

template <typename Block>
const Block* blocks_of(const void* src, int64_t n, int64_t block_elems) {
  assert(n % block_elems == 0);
  (void)n;
  (void)block_elems;
  return static_cast<const Block*>(src);
}

}  // namespace

void k_scale_min(const uint8_t* s, int j, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = s[j] & 63;
    *m = s[j + 4] & 63;
  } else {
    *sc = static_cast<uint8_t>((s[j + 4] & 15) | ((s[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
  }
}

void dequantize_row_f32(const void* src, float* dst, int64_t n) {
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void dequantize_row_f16(const void* src, float* dst, int64_t n) {
  fp16_to_f32_row(static_cast<const uint16_t*>(src), dst, n);
}

void dequantize_row_bf16(const void* src, float* dst, int64_t n) {
  bf16_to_f32_row(static_cast<const uint16_t*>(src), dst, n);
}

void dequantize_row_q4_0(const void* src, float* dst, int64_t n) {
  const auto* b = blocks_of<BlockQ4_0>(src, n, kQK32);
  for (int64_t i = 0; i < n / kQK32; ++i, dst += kQK32) {
    const float d = fp16_to_f32(b[i].d);
    for (int j = 0; j < kQK32 / 2; ++j) {
      dst[j] = d * static_cast<float>((b[i].qs[j] & 15) - 8);
      dst[j + 16] = d * static_cast<float>((b[i].qs[j] >> 4) - 8);
    }
  }
}

void dequantize_row_q4_1(const void* src, float* dst, int64_t n) {
  const auto* b = blocks_of<BlockQ4_1>(src, n, kQK32);
  for (int64_t i = 0; i < n / kQK32; ++i, dst += kQK32) {
    const float d = fp16_to_f32(b[i].d);
    const float m = fp16_to_f32(b[i].m);
    for (int j = 0; j < kQK32 / 2; ++j) {
      dst[j] = d * static_cast<float>(b[i].qs[j] & 15) + m;
      dst[j + 16] = d * static_cast<float>(b[i].qs[j] >> 4) + m;
    }
  }
}

namespace {

// The two 5-bit values of byte j (< 16) of a Q5 block: elements j and j + 16.
void q5_pair(const uint8_t* qs, const uint8_t* qh_bytes, int j, int* lo, int* hi) {
  uint32_t qh = 0;
  std::memcpy(&qh, qh_bytes, sizeof(qh));
  *lo = (qs[j] & 15) | static_cast<int>(((qh >> j) & 1u) << 4);
  *hi = (qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1u) << 4);
}

}  // namespace

void dequantize_row_q5_0(const void* src, float* dst, int64_t n) {
  const auto* b = blocks_of<BlockQ5_0>(src, n, kQK32);
  for (int64_t i = 0; i < n / kQK32; ++i, dst += kQK32) {
    const float d = fp16_to_f32(b[i].d);
    for (int j = 0; j < kQK32 / 2; ++j) {
      int lo = 0, hi = 0;
      q5_pair(b[i].qs, b[i].qh, j, &lo, &hi);
      dst[j] = d * static_cast<float>(lo - 16);
      dst[j + 16] = d * static_cast<float>(hi - 16);
    }
  }
}

void dequantize_row_q5_1(const void* src, float* dst, int64_t n) {
  const auto* b = blocks_of<BlockQ5_1>(src, n, kQK32);
  for (int64_t i = 0; i < n / kQK32; ++i, dst += kQK32) {
    const float d = fp16_to_f32(b[i].d);
    const float m = fp16_to_f32(b[i].m);
    for (int j = 0; j < kQK32 / 2; ++j) {
      int lo = 0, hi = 0;
      q5_pair(b[i].qs, b[i].qh, j, &lo, &hi);
      dst[j] = d * static_cast<float>(lo) + m;
      dst[j + 16] = d * static_cast<float>(hi) + m;
    }
  }
}

void dequantize_row_q8_0(const void* src, float* dst, int64_t n) {
  const auto* b = blocks_of<BlockQ8_0>(src, n, kQK32);
  for (int64_t i = 0; i < n / kQK32; ++i, dst += kQK32) {
    const float d = fp16_to_f32(b[i].d);
    for (int j = 0; j < kQK32; ++j) dst[j] = d * static_cast<float>(b[i].qs[j]);
  }
}

void dequantize_row_q8_1(const void* src, float* dst, int64_t n) {
  const auto* b = blocks_of<BlockQ8_1>(src, n, kQK32);
  for (int64_t i = 0; i < n / kQK32; ++i, dst += kQK32) {
    const float d = fp16_to_f32(b[i].d);
    for (int j = 0; j < kQK32; ++j) dst[j] = d * static_cast<float>(b[i].qs[j]);
  }
}

void dequantize_row_q4_k(const void* src, float* dst, int64_t n) {
  const auto* b = blocks_of<BlockQ4_K>(src, n, kQKK);
  for (int64_t i = 0; i < n / kQKK; ++i) {
    const float d = fp16_to_f32(b[i].d);
    const float dmin = fp16_to_f32(b[i].dmin);
    for (int c = 0; c < 4; ++c, dst += 64) {
      const uint8_t* q = b[i].qs + 32 * c;
      uint8_t sc0 = 0, m0 = 0, sc1 = 0, m1 = 0;
      k_scale_min(b[i].scales, 2 * c, &sc0, &m0);
      k_scale_min(b[i].scales, 2 * c + 1, &sc1, &m1);
      const float d0 = d * sc0, dm0 = dmin * m0, d1 = d * sc1, dm1 = dmin * m1;
      for (int l = 0; l < 32; ++l) {
        dst[l] = d0 * static_cast<float>(q[l] & 15) - dm0;
        dst[l + 32] = d1 * static_cast<float>(q[l] >> 4) - dm1;
      }
    }
  }
}

void dequantize_row_q5_k(const void* src, float* dst, int64_t n) {
  const auto* b = blocks_of<BlockQ5_K>(src, n, kQKK);
  for (int64_t i = 0; i < n / kQKK; ++i) {
    const float d = fp16_to_f32(b[i].d);
    const float dmin = fp16_to_f32(b[i].dmin);
    for (int c = 0; c < 4; ++c, dst += 64) {
      const uint8_t* q = b[i].qs + 32 * c;
      uint8_t sc0 = 0, m0 = 0, sc1 = 0, m1 = 0;
      k_scale_min(b[i].scales, 2 * c, &sc0, &m0);
      k_scale_min(b[i].scales, 2 * c + 1, &sc1, &m1);
      const float d0 = d * sc0, dm0 = dmin * m0, d1 = d * sc1, dm1 = dmin * m1;
      for (int l = 0; l < 32; ++l) {
        const int h0 = ((b[i].qh[l] >> (2 * c)) & 1) << 4;
        const int h1 = ((b[i].qh[l] >> (2 * c + 1)) & 1) << 4;
        dst[l] = d0 * static_cast<float>((q[l] & 15) | h0) - dm0;
        dst[l + 32] = d1 * static_cast<float>((q[l] >> 4) | h1) - dm1;
      }
    }
  }
}

void dequantize_row_q6_k(const void* src, float* dst, int64_t n) {
  const auto* b = blocks_of<BlockQ6_K>(src, n, kQKK);
  for (int64_t i = 0; i < n / kQKK; ++i) {
    const float d = fp16_to_f32(b[i].d);
    for (int h = 0; h < 2; ++h, dst += 128) {
      const uint8_t* ql = b[i].ql + 64 * h;
      const uint8_t* qh = b[i].qh + 32 * h;
      const int8_t* sc = b[i].scales + 8 * h;
      for (int l = 0; l < 32; ++l) {
        const int q0 = ((ql[l] & 15) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q1 = ((ql[l + 32] & 15) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q2 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q3 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        const int s = l / 16;
        dst[l] = (d * static_cast<float>(sc[s])) * static_cast<float>(q0);
        dst[l + 32] = (d * static_cast<float>(sc[s + 2])) * static_cast<float>(q1);
        dst[l + 64] = (d * static_cast<float>(sc[s + 4])) * static_cast<float>(q2);
        dst[l + 96] = (d * static_cast<float>(sc[s + 6])) * static_cast<float>(q3);
      }
    }
  }
}

void dequantize_row_q8_k(const void* src, float* dst, int64_t n) {
  const auto* b = blocks_of<BlockQ8_K>(src, n, kQKK);
  for (int64_t i = 0; i < n / kQKK; ++i, dst += kQKK) {
    for (int j = 0; j < kQKK; ++j) dst[j] = b[i].d * static_cast<float>(b[i].qs[j]);
  }
}

}  // namespace hearth::kernels
