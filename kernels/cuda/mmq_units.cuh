// mmq's weight units: a stored 16-byte-aligned chunk of one row
// (q8_chunk.cuh) read as units of 32 weights, each as 8 natural-order words
// of signed int8 codes and (d, m) with weight = d code + m, for every type
// mmq takes (MmqType: the int8 kernel, and the f16 kernel's scales); and the
// f16 kernel's codes read straight from a row's chunk in shared memory
// (HalfCodes). Include only from mmq.cu and mmq_f16.cu.
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

// The f16 kernel's view of a row's chunk in shared memory: for unit u (< 8)
// and lane t (< 4) the unsigned byte codes of columns 4t .. 4t + 3 (.x) and
// 16 + 4t .. 16 + 4t + 3 (.y), with weight = d (code - kOffset) + m where d
// and m are MmqType<T>::unit's. `row` is 16-byte aligned; offsets that are
// 2 mod 4 (legacy blocks of 18, 22 or 34 bytes) read two halves.
__device__ __forceinline__ uint32_t row_u32(const uint8_t* row, int off) {
  if (off % 4 == 0) return *reinterpret_cast<const uint32_t*>(row + off);
  const auto* h = reinterpret_cast<const uint16_t*>(row + off);
  return static_cast<uint32_t>(h[0]) | (static_cast<uint32_t>(h[1]) << 16);
}

template <GgmlType T>
struct HalfCodes;

// Legacy 4- and 5-bit blocks: qs byte i holds columns i (low nibble) and
// 16 + i (high); qh bit i the fifth bit of column i.
template <int kB, int kQsOff, int kQhOff, int kOff>
struct LegacyHalfCodes {
  static constexpr int kOffset = kOff;
  static __device__ __forceinline__ uint2 codes(const uint8_t* row, int u, int t) {
    const int o = kB * u;
    const uint32_t q = row_u32(row + 4 * t, o + kQsOff);
    uint2 c = make_uint2(q & 0x0f0f0f0fu, (q >> 4) & 0x0f0f0f0fu);
    if constexpr (kQhOff >= 0) {
      const uint32_t qh = row_u32(row, o + kQhOff);
      c.x |= fifth_bits(qh >> (4 * t));
      c.y |= fifth_bits(qh >> (16 + 4 * t));
    }
    return c;
  }
};

template <>
struct HalfCodes<GgmlType::kQ4_0> : LegacyHalfCodes<18, 2, -1, 8> {};
template <>
struct HalfCodes<GgmlType::kQ4_1> : LegacyHalfCodes<20, 4, -1, 0> {};
template <>
struct HalfCodes<GgmlType::kQ5_0> : LegacyHalfCodes<22, 6, 2, 16> {};
template <>
struct HalfCodes<GgmlType::kQ5_1> : LegacyHalfCodes<24, 8, 4, 0> {};

// Q8_0: signed bytes, biased by 128.
template <>
struct HalfCodes<GgmlType::kQ8_0> {
  static constexpr int kOffset = 128;
  static __device__ __forceinline__ uint2 codes(const uint8_t* row, int u, int t) {
    const int o = 34 * u;
    return make_uint2(row_u32(row + 4 * t, o + 2) ^ 0x80808080u, row_u32(row + 4 * t, o + 18) ^ 0x80808080u);
  }
};

// Q4_K / Q5_K: sub-block u's codes are nibble u & 1 of qs bytes 32 (u / 2) ..
// + 31; Q5_K's fifth bits are bit u of qh bytes 0 .. 31.
template <bool kFive>
struct KHalfCodes {
  static constexpr int kOffset = 0;
  static __device__ __forceinline__ uint2 codes(const uint8_t* row, int u, int t) {
    constexpr int kQs = kFive ? 48 : 16;
    const uint8_t* r = row + 4 * t;
    const int sh = 4 * (u & 1);
    uint2 c = make_uint2((row_u32(r, kQs + 32 * (u / 2)) >> sh) & 0x0f0f0f0fu,
                         (row_u32(r, kQs + 16 + 32 * (u / 2)) >> sh) & 0x0f0f0f0fu);
    if constexpr (kFive) {
      c.x |= ((row_u32(r, 16) >> u) & 0x01010101u) << 4;
      c.y |= ((row_u32(r, 32) >> u) & 0x01010101u) << 4;
    }
    return c;
  }
};

template <>
struct HalfCodes<GgmlType::kQ4_K> : KHalfCodes<false> {};
template <>
struct HalfCodes<GgmlType::kQ5_K> : KHalfCodes<true> {};

}  // namespace hearth::kernels::cuda::mmq_units
