// Round-to-nearest quantizers for the K-quant weight types (Q4_K, Q5_K, Q6_K).
#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>

#include "kernels/cpu/fp16.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/quantize.h"

namespace hearth::kernels {
namespace {

// Sub-block scales and mins of a Q4_K / Q5_K super-block, as 6-bit codes
// against two f16 super-scales (d for scales, dmin for mins).
struct KScales {
  uint8_t sc[8];
  uint8_t m[8];
  uint16_t d;
  uint16_t dmin;
};

KScales choose_k_scales(const float* x, int levels) {
  float scale[8], minv[8];
  float max_scale = 0.0f, max_min = 0.0f;
  for (int j = 0; j < 8; ++j) {
    const auto [lo, hi] = std::minmax_element(x + 32 * j, x + 32 * j + 32);
    const float mn = std::min(*lo, 0.0f);  // the min is stored as a non-negative offset
    scale[j] = (*hi - mn) / static_cast<float>(levels);
    minv[j] = -mn;
    max_scale = std::max(max_scale, scale[j]);
    max_min = std::max(max_min, minv[j]);
  }
  KScales k{};
  k.d = f32_to_fp16(max_scale / 63.0f);
  k.dmin = f32_to_fp16(max_min / 63.0f);
  const float d = fp16_to_f32(k.d), dmin = fp16_to_f32(k.dmin);
  for (int j = 0; j < 8; ++j) {
    // Round scales up so the largest value still fits in `levels` steps.
    k.sc[j] = static_cast<uint8_t>(d > 0 ? std::clamp(static_cast<int>(std::ceil(scale[j] / d)), 0, 63) : 0);
    k.m[j] = static_cast<uint8_t>(dmin > 0 ? std::clamp(round_nearest(minv[j] / dmin), 0, 63) : 0);
  }
  return k;
}

void pack_k_scales(const KScales& k, uint8_t* s) {
  for (int j = 0; j < 4; ++j) {
    s[j] = static_cast<uint8_t>((k.sc[j] & 63) | ((k.sc[j + 4] >> 4) << 6));
    s[j + 4] = static_cast<uint8_t>((k.m[j] & 63) | ((k.m[j + 4] >> 4) << 6));
    s[j + 8] = static_cast<uint8_t>((k.sc[j + 4] & 15) | ((k.m[j + 4] & 15) << 4));
  }
}

// Codes 0..levels of a super-block for the chosen scales; q gets 256 codes.
void k_codes(const float* x, const KScales& k, int levels, uint8_t* q) {
  const float d = fp16_to_f32(k.d), dmin = fp16_to_f32(k.dmin);
  for (int j = 0; j < 8; ++j) {
    const float step = d * k.sc[j];
    const float offset = dmin * k.m[j];
    const float inv = step != 0.0f ? 1.0f / step : 0.0f;
    for (int l = 0; l < 32; ++l) {
      q[32 * j + l] = static_cast<uint8_t>(std::clamp(round_nearest((x[32 * j + l] + offset) * inv), 0, levels));
    }
  }
}

// Chunk c holds codes 64c..64c+31 in low nibbles and 64c+32..64c+63 in high ones.
void pack_k_nibbles(const uint8_t* q, uint8_t* qs) {
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l) {
      qs[32 * c + l] = static_cast<uint8_t>((q[64 * c + l] & 15) | ((q[64 * c + 32 + l] & 15) << 4));
    }
  }
}

}  // namespace

void quantize_row_q4_k(const float* src, void* dst, int64_t n) {
  assert(n % kQKK == 0);
  auto* b = static_cast<BlockQ4_K*>(dst);
  for (int64_t i = 0; i < n / kQKK; ++i, src += kQKK) {
    const KScales k = choose_k_scales(src, 15);
    uint8_t q[kQKK];
    k_codes(src, k, 15, q);
    b[i].d = k.d;
    b[i].dmin = k.dmin;
    pack_k_scales(k, b[i].scales);
    pack_k_nibbles(q, b[i].qs);
  }
}

void quantize_row_q5_k(const float* src, void* dst, int64_t n) {
  assert(n % kQKK == 0);
  auto* b = static_cast<BlockQ5_K*>(dst);
  for (int64_t i = 0; i < n / kQKK; ++i, src += kQKK) {
    const KScales k = choose_k_scales(src, 31);
    uint8_t q[kQKK];
    k_codes(src, k, 31, q);
    b[i].d = k.d;
    b[i].dmin = k.dmin;
    pack_k_scales(k, b[i].scales);
    pack_k_nibbles(q, b[i].qs);
    std::memset(b[i].qh, 0, sizeof(b[i].qh));
    for (int c = 0; c < 4; ++c) {
      for (int l = 0; l < 32; ++l) {
        b[i].qh[l] = static_cast<uint8_t>(b[i].qh[l] | (((q[64 * c + l] >> 4) & 1) << (2 * c)) |
                                          (((q[64 * c + 32 + l] >> 4) & 1) << (2 * c + 1)));
      }
    }
  }
}

namespace {

// Int8 sub-block scales of a Q6_K super-block; returns the f16 super-scale.
uint16_t choose_q6_scales(const float* x, int8_t* scales) {
  float scale[16];
  float amax = 0.0f;
  for (int s = 0; s < 16; ++s) {
    float best = 0.0f;
    for (int l = 0; l < 16; ++l) {
      if (std::fabs(x[16 * s + l]) > std::fabs(best)) best = x[16 * s + l];
    }
    scale[s] = best / -32.0f;  // the largest magnitude maps to code -32 exactly
    amax = std::max(amax, std::fabs(scale[s]));
  }
  const uint16_t d16 = f32_to_fp16(amax / 127.0f);
  const float d = fp16_to_f32(d16);
  for (int s = 0; s < 16; ++s) {
    scales[s] = static_cast<int8_t>(d > 0 ? std::clamp(round_nearest(scale[s] / d), -127, 127) : 0);
  }
  return d16;
}

}  // namespace

void quantize_row_q6_k(const float* src, void* dst, int64_t n) {
  assert(n % kQKK == 0);
  auto* b = static_cast<BlockQ6_K*>(dst);
  for (int64_t i = 0; i < n / kQKK; ++i, src += kQKK) {
    b[i].d = choose_q6_scales(src, b[i].scales);
    const float d = fp16_to_f32(b[i].d);
    uint8_t q[kQKK];
    for (int e = 0; e < kQKK; ++e) {
      const float step = d * b[i].scales[e / 16];
      const int v = step != 0.0f ? round_nearest(src[e] / step) : 0;
      q[e] = static_cast<uint8_t>(std::clamp(v, -32, 31) + 32);
    }
    std::memset(b[i].ql, 0, sizeof(b[i].ql));
    std::memset(b[i].qh, 0, sizeof(b[i].qh));
    for (int e = 0; e < kQKK; ++e) {
      const int h = e / 128, k = (e % 128) / 32, l = e % 32;
      uint8_t& ql = b[i].ql[64 * h + 32 * (k & 1) + l];
      ql = static_cast<uint8_t>(ql | ((q[e] & 15) << (4 * (k >> 1))));
      b[i].qh[32 * h + l] = static_cast<uint8_t>(b[i].qh[32 * h + l] | ((q[e] >> 4) << (2 * k)));
    }
  }
}

}  // namespace hearth::kernels
