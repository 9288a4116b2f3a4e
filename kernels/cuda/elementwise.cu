#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/elementwise.h"

#include <algorithm>

namespace hearth::kernels::cuda {
namespace {

constexpr int kThreads = 256;

unsigned grid_for(int64_t n) {
  return static_cast<unsigned>(std::min<int64_t>((n + kThreads - 1) / kThreads, 65536));
}

__global__ void add_kernel(const float* a, const float* b, float* out, int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * kThreads) {
    out[i] = a[i] + b[i];
  }
}

__global__ void add_bias_kernel(float* x, const float* __restrict__ bias, int64_t n, int64_t dim) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * kThreads) {
    x[i] += bias[i % dim];
  }
}

__global__ void scale_kernel(float* x, float s, int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * kThreads) {
    x[i] *= s;
  }
}

// One block: a strided pass, then warp and block maxima.
constexpr int kMaxThreads = 1024;
__global__ void __launch_bounds__(kMaxThreads) abs_max2_kernel(const float* a, const float* b, int64_t n, float* out) {
  __shared__ float s[2][kMaxThreads / kWarp];
  float ma = 0.0f, mb = 0.0f;
  for (int64_t i = threadIdx.x; i < n; i += kMaxThreads) {
    ma = fmaxf(ma, fabsf(a[i]));
    mb = fmaxf(mb, fabsf(b[i]));
  }
#pragma unroll
  for (int off = 16; off > 0; off /= 2) {
    ma = fmaxf(ma, __shfl_xor_sync(0xffffffffu, ma, off));
    mb = fmaxf(mb, __shfl_xor_sync(0xffffffffu, mb, off));
  }
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  if (lane == 0) s[0][warp] = ma, s[1][warp] = mb;
  __syncthreads();
  if (warp != 0) return;
  ma = s[0][lane];
  mb = s[1][lane];
#pragma unroll
  for (int off = 16; off > 0; off /= 2) {
    ma = fmaxf(ma, __shfl_xor_sync(0xffffffffu, ma, off));
    mb = fmaxf(mb, __shfl_xor_sync(0xffffffffu, mb, off));
  }
  if (lane == 0) out[0] = ma, out[1] = mb;
}

}  // namespace

Status abs_max2(const float* a, const float* b, int64_t n, float* out, cudaStream_t stream) {
  HEARTH_CUDA_REQUIRE(a != nullptr && b != nullptr && out != nullptr && n >= 0);
  abs_max2_kernel<<<1, kMaxThreads, 0, stream>>>(a, b, n, out);
  return check_launch("abs_max2_kernel");
}

Status add(const float* a, const float* b, float* out, int64_t n, cudaStream_t stream) {
  HEARTH_CUDA_REQUIRE(a != nullptr && b != nullptr && out != nullptr);
  HEARTH_CUDA_REQUIRE(n >= 0);
  if (n == 0) return {};
  add_kernel<<<grid_for(n), kThreads, 0, stream>>>(a, b, out, n);
  return check_launch("add_kernel");
}

Status scale(float* x, float s, int64_t n, cudaStream_t stream) {
  HEARTH_CUDA_REQUIRE(x != nullptr && n >= 0);
  if (n == 0) return {};
  scale_kernel<<<grid_for(n), kThreads, 0, stream>>>(x, s, n);
  return check_launch("scale_kernel");
}

Status add_bias(float* x, const float* bias, int64_t n_rows, int64_t dim, cudaStream_t stream) {
  HEARTH_CUDA_REQUIRE(x != nullptr && bias != nullptr);
  HEARTH_CUDA_REQUIRE(n_rows >= 0 && dim > 0);
  if (n_rows == 0) return {};
  add_bias_kernel<<<grid_for(n_rows * dim), kThreads, 0, stream>>>(x, bias, n_rows * dim, dim);
  return check_launch("add_bias_kernel");
}

}  // namespace hearth::kernels::cuda
