// A thread's 16-byte-aligned run of weight bytes held in registers, read by
// byte offset: the item of the 8-bit-activation kernels (gemv_q8.cu, mmq.cu).
#pragma once

#include <cstdint>

#include "kernels/cuda/device_common.cuh"

namespace hearth::kernels::cuda {

template <int NV>
struct Chunk {
  uint4 v[NV];

  // Word i (compile-time after unrolling: the array stays in registers).
  __device__ __forceinline__ uint32_t word(int i) const {
    const uint4& q = v[i / 4];
    return i % 4 == 0 ? q.x : i % 4 == 1 ? q.y : i % 4 == 2 ? q.z : q.w;
  }
  // The little-endian 32 bits at even byte offset o.
  __device__ __forceinline__ uint32_t at(int o) const {
    return o % 4 == 0 ? word(o / 4) : __byte_perm(word(o / 4), word(o / 4 + 1), 0x5432);
  }
  __device__ __forceinline__ float half_at(int o) const {
    return half_bits_to_float(static_cast<uint16_t>(word(o / 4) >> (8 * (o % 4))));
  }
};

template <int NV>
__device__ __forceinline__ Chunk<NV> load_chunk(const uint8_t* p) {
  Chunk<NV> c;
  const uint4* q = reinterpret_cast<const uint4*>(p);
#pragma unroll
  for (int i = 0; i < NV; ++i) c.v[i] = __ldg(q + i);
  return c;
}

// Bits 0..3 of `four` moved to bit 4 of bytes 0..3 (the legacy 5th bits).
__device__ __forceinline__ uint32_t fifth_bits(uint32_t four) {
  return (((four & 15u) * 0x00204081u) & 0x01010101u) << 4;
}

}  // namespace hearth::kernels::cuda
