// What the two f16-activation mmq kernels share (mmq_f16.cu: mma.sync, sm_80
// and later; mmq_wg.cu: wgmma, sm_90a): a block of 128 threads computes 128
// weight rows x NT tokens, a stage is one stored 256-column chunk per row
// plus the tokens' 512 bytes of f16 values plus the (d, m) table of the
// rows' 8 units; the weights' decode to f16 pairs; how many stages fit in
// flight, and the launch set-up of one instantiation.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdlib>

#include <cuda_fp16.h>

#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/mmq_args.cuh"
#include "kernels/cuda/mmq_units.cuh"

namespace hearth::kernels::cuda::mmq_detail::mmq_f16_common {

using mmq_units::MmqType;

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / kWarp;
constexpr int kUnits = 8;              // units of 32 per stage (256 columns)
constexpr uint32_t kTokenBytes = 512;  // a token's f16 values of one stage
constexpr int kMaxDepth = 4;

// A row's chunk in shared memory: the stored bytes, padded so that its stride
// in words is 4 mod 8 (rows g = 0..7 of a fragment land on distinct banks).
template <GgmlType T>
__host__ __device__ constexpr uint32_t row_bytes() {
  constexpr uint32_t c = MmqType<T>::kChunkBytes;
  return c / 4 % 8 == 4 ? c : c + 16;
}
// A stage: the rows, the tokens, the (d, m) table [8 units][128 rows].
template <GgmlType T>
__host__ __device__ constexpr uint32_t a_bytes() {
  return kF16BlockRows * row_bytes<T>();
}
template <GgmlType T, int NT>
__host__ __device__ constexpr uint32_t stage_bytes() {
  return a_bytes<T>() + NT * kTokenBytes + kF16BlockRows * kUnits * 4;
}

// Two biased codes (bytes kSel of w) as the f16 pair d (code - offset) + m.
template <uint32_t kSel>
__device__ __forceinline__ uint32_t code_pair(uint32_t w, __half2 bias, __half2 d, __half2 m) {
  const uint32_t h = __byte_perm(w, 0x64646464u, kSel);  // 1024 + code, exact
  const __half2 v = __hsub2(*reinterpret_cast<const __half2*>(&h), bias);
  const __half2 r = __hfma2(v, d, m);
  return *reinterpret_cast<const uint32_t*>(&r);
}

// Stages in flight: HEARTH_CUDA_MMQ_DEPTH=k (2..4) where it fits, else the
// most (up to 4) with which two blocks fit per multiprocessor, else the most
// that fit in one; 0 where not even 2 fit.
inline int depth_for(uint32_t stage) {
  static const int env = [] {
    const char* v = std::getenv("HEARTH_CUDA_MMQ_DEPTH");
    return v == nullptr ? 0 : std::clamp(std::atoi(v), 0, kMaxDepth);
  }();
  const DeviceLimits& l = device_limits();
  const auto fits = [&](int d, int blocks) {
    const size_t per = static_cast<size_t>(d) * stage;
    return per <= static_cast<size_t>(l.smem_block) &&
           static_cast<size_t>(blocks) * (per + static_cast<size_t>(l.smem_reserved)) <= static_cast<size_t>(l.smem_sm);
  };
  if (env >= 2 && fits(env, 1)) return env;
  for (int blocks = 2; blocks >= 1; --blocks) {
    for (int d = kMaxDepth; d >= 2; --d) {
      if (fits(d, blocks)) return d;
    }
  }
  return 0;
}

// One instantiation's stages in flight, shared memory and resident blocks per
// multiprocessor (raising its dynamic shared-memory limit once); 0 resident
// where the kernel cannot run (not enough shared memory, or no image of it
// for this device).
template <auto Kernel, uint32_t kStage>
struct F16Launch {
  static int depth() {
    static const int d = depth_for(kStage);
    return d;
  }
  static size_t smem() { return static_cast<size_t>(depth()) * kStage; }
  static int resident() {
    static std::atomic<int> cached{-1};
    int r = cached.load(std::memory_order_relaxed);
    if (r >= 0) return r;
    r = 0;
    if (depth() >= 2 && cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(smem())) == cudaSuccess) {
      if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r, Kernel, kThreads, smem()) != cudaSuccess) r = 0;
    }
    static_cast<void>(cudaGetLastError());
    cached.store(r, std::memory_order_relaxed);
    return r;
  }
};

}  // namespace hearth::kernels::cuda::mmq_detail::mmq_f16_common
