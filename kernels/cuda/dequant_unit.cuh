// Device dequantisation of one "unit": 32 consecutive elements of a row, for
// every supported weight type. Units are the common grain of the GEMV, the
// embedding lookup and the f16 dequantisation: a legacy block is one unit, a
// K-quant super-block eight.
//
// The arithmetic is that of kernels/cpu/dequantize.cpp step for step, with
// explicitly rounded operations (__fmul_rn, no fused multiply-add), so the
// values are bit-identical to the CPU reference.
#pragma once

#include <cstdint>

#include "kernels/cpu/ggml_type.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cuda/device_common.cuh"

namespace hearth::kernels::cuda {

inline constexpr int kUnit = 32;

// Unit<T>::load(row, u, w): w[i] = element 32u + i of the row starting at `row`.
template <GgmlType T>
struct Unit;

template <>
struct Unit<GgmlType::kF32> {
  static __device__ __forceinline__ void load(const uint8_t* row, int64_t u, float (&w)[kUnit]) {
    const float4* p = reinterpret_cast<const float4*>(row) + 8 * u;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const float4 v = __ldg(p + k);
      w[4 * k] = v.x, w[4 * k + 1] = v.y, w[4 * k + 2] = v.z, w[4 * k + 3] = v.w;
    }
  }
};

// F16 and BF16: 4 16-byte loads of 8 halves.
template <bool kBf16>
__device__ __forceinline__ void load_half_unit(const uint8_t* row, int64_t u, float (&w)[kUnit]) {
  const uint4* p = reinterpret_cast<const uint4*>(row) + 4 * u;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const uint4 v = __ldg(p + k);
    const uint32_t words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const auto lo = static_cast<uint16_t>(words[i] & 0xffffu), hi = static_cast<uint16_t>(words[i] >> 16);
      w[8 * k + 2 * i] = kBf16 ? bf16_bits_to_float(lo) : half_bits_to_float(lo);
      w[8 * k + 2 * i + 1] = kBf16 ? bf16_bits_to_float(hi) : half_bits_to_float(hi);
    }
  }
}

template <>
struct Unit<GgmlType::kF16> {
  static __device__ __forceinline__ void load(const uint8_t* row, int64_t u, float (&w)[kUnit]) {
    load_half_unit<false>(row, u, w);
  }
};

template <>
struct Unit<GgmlType::kBF16> {
  static __device__ __forceinline__ void load(const uint8_t* row, int64_t u, float (&w)[kUnit]) {
    load_half_unit<true>(row, u, w);
  }
};

// Legacy 4/5-bit blocks: byte j of qs holds element j (low nibble) and j + 16
// (high nibble); the optional 5th bits come from qh (bit j, bit j + 16).
// kOffset: subtracted from q (8, 16 or 0); with_min: y = d q + m instead of d (q - off).
template <int kOffset, bool kWithMin>
__device__ __forceinline__ void legacy_nibbles(const uint8_t* qs, uint32_t qh, float d, float m, float (&w)[kUnit]) {
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const uint32_t q = load_u32_a2(qs + 4 * k);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int j = 4 * k + i;
      const int lo = static_cast<int>((byte_of(q, i) & 15u) | (((qh >> j) & 1u) << 4));
      const int hi = static_cast<int>((byte_of(q, i) >> 4) | (((qh >> (j + 16)) & 1u) << 4));
      if constexpr (kWithMin) {
        w[j] = __fadd_rn(__fmul_rn(d, static_cast<float>(lo)), m);
        w[j + 16] = __fadd_rn(__fmul_rn(d, static_cast<float>(hi)), m);
      } else {
        w[j] = __fmul_rn(d, static_cast<float>(lo - kOffset));
        w[j + 16] = __fmul_rn(d, static_cast<float>(hi - kOffset));
      }
    }
  }
}

template <>
struct Unit<GgmlType::kQ4_0> {
  static __device__ __forceinline__ void load(const uint8_t* row, int64_t u, float (&w)[kUnit]) {
    const auto* b = reinterpret_cast<const BlockQ4_0*>(row) + u;
    legacy_nibbles<8, false>(b->qs, 0u, half_bits_to_float(__ldg(&b->d)), 0.0f, w);
  }
};

template <>
struct Unit<GgmlType::kQ4_1> {
  static __device__ __forceinline__ void load(const uint8_t* row, int64_t u, float (&w)[kUnit]) {
    const auto* b = reinterpret_cast<const BlockQ4_1*>(row) + u;
    legacy_nibbles<0, true>(b->qs, 0u, half_bits_to_float(__ldg(&b->d)), half_bits_to_float(__ldg(&b->m)), w);
  }
};

template <>
struct Unit<GgmlType::kQ5_0> {
  static __device__ __forceinline__ void load(const uint8_t* row, int64_t u, float (&w)[kUnit]) {
    const auto* b = reinterpret_cast<const BlockQ5_0*>(row) + u;
    legacy_nibbles<16, false>(b->qs, load_u32_a2(b->qh), half_bits_to_float(__ldg(&b->d)), 0.0f, w);
  }
};

template <>
struct Unit<GgmlType::kQ5_1> {
  static __device__ __forceinline__ void load(const uint8_t* row, int64_t u, float (&w)[kUnit]) {
    const auto* b = reinterpret_cast<const BlockQ5_1*>(row) + u;
    legacy_nibbles<0, true>(b->qs, load_u32_a2(b->qh), half_bits_to_float(__ldg(&b->d)),
                            half_bits_to_float(__ldg(&b->m)), w);
  }
};

template <>
struct Unit<GgmlType::kQ8_0> {
  static __device__ __forceinline__ void load(const uint8_t* row, int64_t u, float (&w)[kUnit]) {
    const auto* b = reinterpret_cast<const BlockQ8_0*>(row) + u;
    const float d = half_bits_to_float(__ldg(&b->d));
    const auto* qs = reinterpret_cast<const uint8_t*>(b->qs);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const uint32_t q = load_u32_a2(qs + 4 * k);
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        w[4 * k + i] = __fmul_rn(d, static_cast<float>(static_cast<int8_t>(byte_of(q, i))));
      }
    }
  }
};

// The 6-bit scale and min of sub-block j (< 8) of a Q4_K / Q5_K block from
// its 12 scale bytes as three words s0, s1, s2: k_scale_min's packing.
__device__ __forceinline__ void k_scale_min_words(uint32_t s0, uint32_t s1, uint32_t s2, int j, uint32_t* sc,
                                                  uint32_t* m) {
  if (j < 4) {
    *sc = byte_of(s0, j) & 63u;
    *m = byte_of(s1, j) & 63u;
  } else {
    *sc = (byte_of(s2, j - 4) & 15u) | ((byte_of(s0, j - 4) >> 6) << 4);
    *m = (byte_of(s2, j - 4) >> 4) | ((byte_of(s1, j - 4) >> 6) << 4);
  }
}

// The same from the 12 scale bytes, as floats.
__device__ __forceinline__ void k_scale_min_dev(const uint8_t* scales, int j, float* sc, float* m) {
  uint32_t isc = 0, im = 0;
  k_scale_min_words(load_u32_a2(scales), load_u32_a2(scales + 4), load_u32_a2(scales + 8), j, &isc, &im);
  *sc = static_cast<float>(isc);
  *m = static_cast<float>(im);
}

// Q4_K and Q5_K: unit j of a super-block is sub-block j: the low (j even) or
// high (j odd) nibbles of qs[32 (j / 2) ..], 5th bit (Q5_K) bit j of qh[l].
template <bool kFiveBit, typename Block>
__device__ __forceinline__ void k_quant_unit(const Block* b, int j, float (&w)[kUnit]) {
  const float d = half_bits_to_float(__ldg(&b->d)), dmin = half_bits_to_float(__ldg(&b->dmin));
  float sc = 0.0f, mn = 0.0f;
  k_scale_min_dev(b->scales, j, &sc, &mn);
  const float d0 = __fmul_rn(d, sc), dm0 = __fmul_rn(dmin, mn);
  const uint8_t* qs = b->qs + 32 * (j / 2);
  const int shift = 4 * (j & 1);
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const uint32_t q = load_u32_a2(qs + 4 * k);
    uint32_t h = 0;
    if constexpr (kFiveBit) h = load_u32_a2(b->qh + 4 * k);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      uint32_t v = (byte_of(q, i) >> shift) & 15u;
      if constexpr (kFiveBit) v |= ((byte_of(h, i) >> j) & 1u) << 4;
      w[4 * k + i] = __fsub_rn(__fmul_rn(d0, static_cast<float>(v)), dm0);
    }
  }
}

template <>
struct Unit<GgmlType::kQ4_K> {
  static __device__ __forceinline__ void load(const uint8_t* row, int64_t u, float (&w)[kUnit]) {
    k_quant_unit<false>(reinterpret_cast<const BlockQ4_K*>(row) + u / 8, static_cast<int>(u % 8), w);
  }
};

template <>
struct Unit<GgmlType::kQ5_K> {
  static __device__ __forceinline__ void load(const uint8_t* row, int64_t u, float (&w)[kUnit]) {
    k_quant_unit<true>(reinterpret_cast<const BlockQ5_K*>(row) + u / 8, static_cast<int>(u % 8), w);
  }
};

// Q6_K: unit j = 4 h + k covers elements 128 h + 32 k + l (l < 32): low bits
// in ql[64 h + 32 (k & 1) + l] (nibble k / 2), high bits 2k.. of qh[32 h + l],
// scale scales[8 h + 2 k + l / 16].
template <>
struct Unit<GgmlType::kQ6_K> {
  static __device__ __forceinline__ void load(const uint8_t* row, int64_t u, float (&w)[kUnit]) {
    const auto* b = reinterpret_cast<const BlockQ6_K*>(row) + u / 8;
    const int j = static_cast<int>(u % 8), h = j / 4, k = j % 4;
    const float d = half_bits_to_float(__ldg(&b->d));
    const float ds[2] = {__fmul_rn(d, static_cast<float>(b->scales[8 * h + 2 * k])),
                         __fmul_rn(d, static_cast<float>(b->scales[8 * h + 2 * k + 1]))};
    const uint8_t* ql = b->ql + 64 * h + 32 * (k & 1);
    const uint8_t* qh = b->qh + 32 * h;
    const int lshift = 4 * (k / 2), hshift = 2 * k;
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      const uint32_t lo = load_u32_a2(ql + 4 * c), hi = load_u32_a2(qh + 4 * c);
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int q = static_cast<int>(((byte_of(lo, i) >> lshift) & 15u) | (((byte_of(hi, i) >> hshift) & 3u) << 4));
        w[4 * c + i] = __fmul_rn(ds[c / 4], static_cast<float>(q - 32));
      }
    }
  }
};

// Calls L<T>::run(args...) for the supported type t; false for any other.
// L is each launcher's small class template around its kernel launch.
template <template <GgmlType> class L, typename... Args>
__host__ bool dispatch_type(GgmlType t, Args&&... args) {
  switch (t) {
    case GgmlType::kF32:
      L<GgmlType::kF32>::run(args...);
      return true;
    case GgmlType::kF16:
      L<GgmlType::kF16>::run(args...);
      return true;
    case GgmlType::kBF16:
      L<GgmlType::kBF16>::run(args...);
      return true;
    case GgmlType::kQ4_0:
      L<GgmlType::kQ4_0>::run(args...);
      return true;
    case GgmlType::kQ4_1:
      L<GgmlType::kQ4_1>::run(args...);
      return true;
    case GgmlType::kQ5_0:
      L<GgmlType::kQ5_0>::run(args...);
      return true;
    case GgmlType::kQ5_1:
      L<GgmlType::kQ5_1>::run(args...);
      return true;
    case GgmlType::kQ8_0:
      L<GgmlType::kQ8_0>::run(args...);
      return true;
    case GgmlType::kQ4_K:
      L<GgmlType::kQ4_K>::run(args...);
      return true;
    case GgmlType::kQ5_K:
      L<GgmlType::kQ5_K>::run(args...);
      return true;
    case GgmlType::kQ6_K:
      L<GgmlType::kQ6_K>::run(args...);
      return true;
    default:
      return false;
  }
}

}  // namespace hearth::kernels::cuda
