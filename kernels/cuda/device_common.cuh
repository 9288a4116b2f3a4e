// Device-side helpers shared by the CUDA kernels: half/bfloat16/fp8 conversion
// of raw bits, unaligned word loads, warp reductions. Include only from .cu files.
#pragma once

#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace hearth::kernels::cuda {

inline constexpr int kWarp = 32;

__device__ __forceinline__ float half_bits_to_float(uint16_t h) {
  return __half2float(__ushort_as_half(h));
}

__device__ __forceinline__ uint16_t float_to_half_bits(float f) {
  return __half_as_ushort(__float2half_rn(f));
}

__device__ __forceinline__ float bf16_bits_to_float(uint16_t b) {
  return __uint_as_float(static_cast<uint32_t>(b) << 16);
}

// FP8 E4M3 (OCP): 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinity,
// max 448. Encoding rounds to nearest even and saturates to +-448.
__device__ __forceinline__ float fp8_e4m3_to_float(uint8_t b) {
  const __half_raw h = __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(b), __NV_E4M3);
  return __half2float(__half(h));
}

__device__ __forceinline__ uint8_t float_to_fp8_e4m3(float f) {
  return static_cast<uint8_t>(__nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E4M3));
}

// A 32-bit little-endian word at a 2-byte aligned address (block fields of the
// ggml formats are only 2-byte aligned: Q4_0 blocks are 18 bytes).
__device__ __forceinline__ uint32_t load_u32_a2(const uint8_t* p) {
  const uint16_t* q = reinterpret_cast<const uint16_t*>(p);
  return static_cast<uint32_t>(__ldg(q)) | (static_cast<uint32_t>(__ldg(q + 1)) << 16);
}

__device__ __forceinline__ uint16_t load_u16(const uint8_t* p) {
  return __ldg(reinterpret_cast<const uint16_t*>(p));
}

// Byte k (< 4) of a word.
__device__ __forceinline__ uint32_t byte_of(uint32_t w, int k) {
  return (w >> (8 * k)) & 0xffu;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int off = kWarp / 2; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int off = kWarp / 2; off > 0; off /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
  return v;
}

// Programmatic dependent launch (sm_90; no-ops elsewhere). A kernel launched
// with cudaLaunchAttributeProgrammaticStreamSerialization may start while the
// kernel before it on the stream still runs, once every block of that kernel
// has called pdl_launch_dependents (or exited); it must call pdl_wait, which
// returns when the kernel before has completed and its writes are visible,
// before it reads anything that kernel (or an earlier one) wrote. Only
// read-only data (weights) may be touched before pdl_wait. Triggering early is
// always safe: a dependent launched without the attribute waits as usual.
__device__ __forceinline__ void pdl_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Host side: the compute capability's major number of the current device at
// the first call (0 when it cannot be read). The process uses one device.
inline int device_cc_major() {
  static const int major = [] {
    int dev = 0, m = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&m, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) {
      static_cast<void>(cudaGetLastError());
      return 0;
    }
    return m;
  }();
  return major;
}

// Host side: the current device's figures that size grids and shared-memory
// stages, read once (zeros where a query fails).
struct DeviceLimits {
  int sms = 0, major = 0, smem_block = 0, smem_sm = 0, smem_reserved = 0;
};

inline const DeviceLimits& device_limits() {
  static const DeviceLimits lim = [] {
    DeviceLimits l;
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&l.sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&l.major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&l.smem_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&l.smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&l.smem_reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev) != cudaSuccess) {
      static_cast<void>(cudaGetLastError());
      return DeviceLimits{};
    }
    return l;
  }();
  return lim;
}

// Host side: whether kernels that wait with pdl_wait are launched with the
// programmatic-serialization attribute (their weight loads overlap the end of
// the kernel before). Hopper and later; off with HEARTH_CUDA_PDL=0 (A/B
// runs). Never changes a result.
inline bool pdl_on() {
  static const bool on = [] {
    const char* v = std::getenv("HEARTH_CUDA_PDL");
    if (v != nullptr && std::strcmp(v, "0") == 0) return false;
    return device_cc_major() >= 9;
  }();
  return on;
}

// kernel<<<grid, block, smem, stream>>>(args...), with programmatic stream
// serialization where `pdl`: the kernel must then call pdl_wait before it
// reads what the kernels before wrote (or writes anything they may read).
template <typename... P, typename... A>
cudaError_t launch_with_pdl(bool pdl, void (*kernel)(P...), dim3 grid, int block, size_t smem, cudaStream_t stream,
                            A&&... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = dim3(static_cast<unsigned>(block));
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = pdl ? 1 : 0;
  return cudaLaunchKernelEx(&cfg, kernel, std::forward<A>(args)...);
}

// The GEMVs and mmq kernels: with the attribute where pdl_on().
template <typename... P, typename... A>
cudaError_t launch_pdl(void (*kernel)(P...), dim3 grid, int block, size_t smem, cudaStream_t stream, A&&... args) {
  return launch_with_pdl(pdl_on(), kernel, grid, block, smem, stream, std::forward<A>(args)...);
}

// The small decode kernels between the GEMVs (rope + store-KV, attention,
// swiglu): launched with the attribute where pdl_on() and not
// HEARTH_CUDA_PDL_SMALL=0 (A/B runs), so each one's launch overlaps the
// kernel before it; each waits with pdl_wait before touching memory.
inline bool pdl_small_on() {
  static const bool on = [] {
    const char* v = std::getenv("HEARTH_CUDA_PDL_SMALL");
    return pdl_on() && (v == nullptr || std::strcmp(v, "0") != 0);
  }();
  return on;
}

// Sum over a block of blockDim.x threads (a multiple of 32, <= 1024); every
// thread gets the total. scratch: 32 floats of shared memory.
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const int n_warps = blockDim.x / kWarp;
  v = warp_sum(v);
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < n_warps ? scratch[lane] : 0.0f;
  return warp_sum(v);
}

}  // namespace hearth::kernels::cuda
