// mmq's weight units (mmq.cu): a stored 16-byte-aligned chunk of one row
// (q8_chunk.cuh) read as units of 32 weights, each as 8 natural-order words
// of signed int8 codes and (d, m) with weight = d code + m, for every type
// mmq takes. Include only from mmq.cu.
#pragma once

#include <cstdint>

#include "kernels/cpu/ggml_type.h"
#include "kernels/cuda/dequant_unit.cuh"
#include "kernels/cuda/q8_chunk.cuh"

namespace hearth::kernels::cuda::mmq_units {

// Signed bytes v - off of the unsigned bytes v (no borrow between bytes).
template <uint32_t kOff>
__device__ __forceinline__ uint32_t minus_bytes(uint32_t v) {
  return ((v | 0x80808080u) - kOff * 0x01010101u) ^ 0x80808080u;
}

// A unit of 32 weights as natural-order code words, scale and offset.
struct WUnit {
  uint32_t q[8];
  float d, m;
};

template <GgmlType T>
struct MmqType;

// Legacy blocks: kBytes, the qs / qh offsets, kSub (the code offset folded
// into signed codes, 0 for none) and kMin (a min term).
template <int kB, int kQsOff, int kQhOff, uint32_t kSubV, bool kMinV>
struct LegacyMmq {
  static constexpr int kChunkBytes = 8 * kB;
  static constexpr bool kOffset = kMinV;
  template <int NV>
  static __device__ __forceinline__ WUnit unit(const Chunk<NV>& c, int b) {
    WUnit u;
    const int o = kB * b;
    u.d = c.half_at(o);
    u.m = kMinV ? c.half_at(o + 2) : 0.0f;
    const uint32_t qh = kQhOff >= 0 ? c.at(o + (kQhOff >= 0 ? kQhOff : 0)) : 0u;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const uint32_t q = c.at(o + kQsOff + 4 * i);
      uint32_t lo = q & 0x0f0f0f0fu, hi = (q >> 4) & 0x0f0f0f0fu;
      if constexpr (kQhOff >= 0) {
        lo |= fifth_bits(qh >> (4 * i));
        hi |= fifth_bits(qh >> (16 + 4 * i));
      }
      if constexpr (kSubV != 0) {
        lo = minus_bytes<kSubV>(lo);
        hi = minus_bytes<kSubV>(hi);
      }
      u.q[i] = lo;
      u.q[4 + i] = hi;
    }
    return u;
  }
};

template <>
struct MmqType<GgmlType::kQ4_0> : LegacyMmq<18, 2, -1, 8, false> {};
template <>
struct MmqType<GgmlType::kQ4_1> : LegacyMmq<20, 4, -1, 0, true> {};
template <>
struct MmqType<GgmlType::kQ5_0> : LegacyMmq<22, 6, 2, 16, false> {};
template <>
struct MmqType<GgmlType::kQ5_1> : LegacyMmq<24, 8, 4, 0, true> {};

template <>
struct MmqType<GgmlType::kQ8_0> {
  static constexpr int kChunkBytes = 8 * 34;
  static constexpr bool kOffset = false;
  template <int NV>
  static __device__ __forceinline__ WUnit unit(const Chunk<NV>& c, int b) {
    WUnit u;
    const int o = 34 * b;
    u.d = c.half_at(o);
    u.m = 0.0f;
#pragma unroll
    for (int i = 0; i < 8; ++i) u.q[i] = c.at(o + 2 + 4 * i);
    return u;
  }
};

// Q4_K / Q5_K: one super-block per chunk; sub-block j is unit j (see
// gemv_q8.cu's k_chunk_dot for the layout): d sc_j, -dmin m_j.
template <bool kFive>
struct KMmq {
  static constexpr int kChunkBytes = kFive ? 176 : 144;
  static constexpr bool kOffset = true;
  template <int NV>
  static __device__ __forceinline__ WUnit unit(const Chunk<NV>& c, int j) {
    constexpr int kQsWord = kFive ? 12 : 4;
    WUnit u;
    uint32_t isc = 0, imn = 0;
    k_scale_min_words(c.word(1), c.word(2), c.word(3), j, &isc, &imn);
    const uint32_t dd = c.word(0);
    u.d = half_bits_to_float(static_cast<uint16_t>(dd & 0xffffu)) * static_cast<float>(isc);
    u.m = -(half_bits_to_float(static_cast<uint16_t>(dd >> 16)) * static_cast<float>(imn));
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      uint32_t q = (c.word(kQsWord + 8 * (j / 2) + i) >> (4 * (j & 1))) & 0x0f0f0f0fu;
      if constexpr (kFive) q |= ((c.word(4 + i) >> j) & 0x01010101u) << 4;
      u.q[i] = q;
    }
    return u;
  }
};

template <>
struct MmqType<GgmlType::kQ4_K> : KMmq<false> {};
template <>
struct MmqType<GgmlType::kQ5_K> : KMmq<true> {};

}  // namespace hearth::kernels::cuda::mmq_units
