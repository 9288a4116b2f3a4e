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
#include "kernels/cuda/mma.cuh"
#include "kernels/cuda/mmq_args.cuh"
#include "kernels/cuda/mmq_units.cuh"
#include "kernels/cuda/q8_chunk.cuh"

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

// The token's scale (one block per token, a float4 group per thread at a
// time): 2^(8 - e) where its largest magnitude is f 2^e, f in [0.5, 1), so
// the scaled values reach [128, 256) exactly and never overflow f16; thread
// 0 writes 2^(e - 8), which undoes it, to *scale_out.
__device__ __forceinline__ float token_scale(const float4* row, int64_t groups, float* scale_out) {
  __shared__ float part[32];
  float amax = 0.0f;
  for (int64_t i = threadIdx.x; i < groups; i += blockDim.x) {
    const float4 v = row[i];
    amax = fmaxf(amax, fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w))));
  }
  amax = warp_max(amax);
  if (threadIdx.x % kWarp == 0) part[threadIdx.x / kWarp] = amax;
  __syncthreads();
  if (threadIdx.x < kWarp) {
    float v = threadIdx.x < blockDim.x / kWarp ? part[threadIdx.x] : 0.0f;
    v = warp_max(v);
    if (threadIdx.x == 0) part[0] = v;
  }
  __syncthreads();
  amax = part[0];
  int e = 0;
  if (amax > 0.0f && isfinite(amax)) static_cast<void>(frexpf(amax, &e));
  if (threadIdx.x == 0) *scale_out = ldexpf(1.0f, e - 8);
  return ldexpf(1.0f, 8 - e);
}

// Waits for this thread's copies of the oldest stage in flight: one commit
// group a stage, depth - 1 issued ahead.
__device__ __forceinline__ void wait_stage(int depth) {
  if (depth == 2) {
    cp_async_wait<0>();
  } else if (depth == 3) {
    cp_async_wait<1>();
  } else {
    cp_async_wait<2>();
  }
}

// Thread tid's row chunk (as stored, at chunk) as its 8 units' (d, m) f16
// pairs in the stage's table dm[unit][128 rows].
template <GgmlType T>
__device__ __forceinline__ void fill_unit_table(const uint8_t* chunk, uint32_t* dm, int tid) {
  constexpr int kNV = MmqType<T>::kChunkBytes / 16;
  Chunk<kNV> c;
  const auto* src = reinterpret_cast<const uint4*>(chunk);
#pragma unroll
  for (int i = 0; i < kNV; ++i) c.v[i] = src[i];
#pragma unroll
  for (int u = 0; u < kUnits; ++u) {
    const mmq_units::WUnit wu = MmqType<T>::unit(c, u);
    dm[u * kF16BlockRows + tid] = pack_half2(wu.d, wu.m);
  }
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
  static constexpr auto kKernel = Kernel;
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

// Resident blocks of family K (K<T, NT>: an F16Launch) for a type and tile.
template <template <GgmlType, int> class K>
int resident_of(GgmlType t, int nt) {
  return with_type(t, [&](auto type) {
    return with_tile(nt, [&](auto tile) { return K<decltype(type)::value, decltype(tile)::value>::resident(); });
  });
}

// Launches family K's kernel for a type and tile (its shared memory raised first).
template <template <GgmlType, int> class K>
Status launch_of(GgmlType t, int nt, const MmqArgs& a, dim3 grid, cudaStream_t stream, const char* name) {
  HEARTH_CUDA_REQUIRE(resident_of<K>(t, nt) > 0);
  return with_type(t, [&](auto type) {
    return with_tile(nt, [&](auto tile) -> Status {
      using L = K<decltype(type)::value, decltype(tile)::value>;
      HEARTH_CUDA_CHECK(launch_pdl(L::kKernel, grid, kThreads, L::smem(), stream, a, L::depth()));
      return check_launch(name);
    });
  });
}

// Launches an activation kernel (one block of 256 threads per token) writing
// the f16 values to act and the per-token scales at act + scale_offset.
template <class Out>
Status launch_to_f16(void (*kernel)(const float*, int64_t, Out*, float*), const char* name, const float* x,
                     int64_t n_tokens, int64_t cols, void* act, size_t scale_offset, cudaStream_t stream) {
  HEARTH_CUDA_REQUIRE(n_tokens <= 0x7fffffff && reinterpret_cast<uintptr_t>(x) % 16 == 0);
  auto* scale = reinterpret_cast<float*>(static_cast<uint8_t*>(act) + scale_offset);
  HEARTH_CUDA_CHECK(launch_pdl(kernel, dim3(static_cast<unsigned>(n_tokens)), 256, 0, stream, x, cols,
                               static_cast<Out*>(act), scale));
  return check_launch(name);
}

}  // namespace hearth::kernels::cuda::mmq_detail::mmq_f16_common
