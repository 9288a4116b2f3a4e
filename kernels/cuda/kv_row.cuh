// Eight consecutive elements of one K/V row of the paged cache (paged_kv.h),
// as the attention kernels load them: one 16-byte load for f16, 8 bytes for
// fp8 and q8_0 (+ the q8_0 group's f16 scale), then decoded to f32 (decode
// attention) or packed as 8 halves (the tensor-core prompt attention).
// Include only from .cu files.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/cuda/device_common.cuh"
#include "kernels/kv_precision.h"

namespace hearth::kernels::cuda {

inline constexpr int kWideElems = 8;  // elements one load covers

template <KvPrecision kDtype>
struct WideRaw;  // one lane's kWideElems raw elements
template <>
struct WideRaw<KvPrecision::kF16> {
  uint4 w;
};
template <>
struct WideRaw<KvPrecision::kFp8E4M3> {
  uint2 w;
};
template <>
struct WideRaw<KvPrecision::kQ8_0> {  // 8 codes of one group of 32 and the group's f16 scale
  uint2 w;
  uint16_t d;
};

// off: a multiple of kWideElems, so a lane's 8 elements share one q8_0 group.
template <KvPrecision kDtype>
__device__ __forceinline__ WideRaw<kDtype> wide_load(const void* base, const void* dbase, int64_t off) {
  if constexpr (kDtype == KvPrecision::kF16) {
    return {__ldg(reinterpret_cast<const uint4*>(static_cast<const uint16_t*>(base) + off))};
  } else if constexpr (kDtype == KvPrecision::kQ8_0) {
    return {__ldg(reinterpret_cast<const uint2*>(static_cast<const uint8_t*>(base) + off)),
            __ldg(static_cast<const uint16_t*>(dbase) + off / 32)};
  } else {
    return {__ldg(reinterpret_cast<const uint2*>(static_cast<const uint8_t*>(base) + off))};
  }
}

// The same elements staged in shared memory (f16 and fp8 only: the row's bytes as stored).
template <KvPrecision kDtype>
__device__ __forceinline__ WideRaw<kDtype> wide_smem(const uint8_t* p) {
  static_assert(kDtype != KvPrecision::kQ8_0, "q8_0 rows are not staged");
  if constexpr (kDtype == KvPrecision::kF16) {
    return {*reinterpret_cast<const uint4*>(p)};
  } else {
    return {*reinterpret_cast<const uint2*>(p)};
  }
}

template <KvPrecision kDtype>
__device__ __forceinline__ WideRaw<kDtype> wide_zero() {
  if constexpr (kDtype == KvPrecision::kF16) {
    return {make_uint4(0, 0, 0, 0)};
  } else if constexpr (kDtype == KvPrecision::kQ8_0) {
    return {make_uint2(0, 0), 0};
  } else {
    return {make_uint2(0, 0)};
  }
}

template <KvPrecision kDtype>
__device__ __forceinline__ void wide_decode(const WideRaw<kDtype>& r, float (&out)[kWideElems]) {
  if constexpr (kDtype == KvPrecision::kQ8_0) {
    const float d = half_bits_to_float(r.d);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      out[i] = static_cast<float>(static_cast<int8_t>(byte_of(r.w.x, i))) * d;
      out[4 + i] = static_cast<float>(static_cast<int8_t>(byte_of(r.w.y, i))) * d;
    }
  } else if constexpr (kDtype == KvPrecision::kF16) {
    const uint32_t words[4] = {r.w.x, r.w.y, r.w.z, r.w.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 f = __half22float2(__halves2half2(__ushort_as_half(static_cast<uint16_t>(words[i] & 0xffffu)),
                                                     __ushort_as_half(static_cast<uint16_t>(words[i] >> 16))));
      out[2 * i] = f.x;
      out[2 * i + 1] = f.y;
    }
  } else {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      out[i] = fp8_e4m3_to_float(static_cast<uint8_t>(byte_of(r.w.x, i)));
      out[4 + i] = fp8_e4m3_to_float(static_cast<uint8_t>(byte_of(r.w.y, i)));
    }
  }
}

// The 8 elements as halves, packed in order (element 2i in the low half of
// word i): f16 as stored; fp8 codes exactly (every E4M3 value is an f16;
// the tensor's scale is applied by the caller); q8_0 as code * scale rounded
// to f16.
template <KvPrecision kDtype>
__device__ __forceinline__ uint4 wide_to_half8(const WideRaw<kDtype>& r) {
  if constexpr (kDtype == KvPrecision::kF16) {
    return r.w;
  } else {
    float f[kWideElems];
    wide_decode<kDtype>(r, f);
    uint32_t w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const __half2 h = __floats2half2_rn(f[2 * i], f[2 * i + 1]);
      w[i] = *reinterpret_cast<const uint32_t*>(&h);
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
  }
}

}  // namespace hearth::kernels::cuda
