#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/rmsnorm.h"

namespace hearth::kernels::cuda {
namespace {

constexpr int kThreads = 256;

// One block per row. delta != null: x += delta first (written back). The
// scaling order (x * scale) * w is the CPU reference's.
__global__ void __launch_bounds__(kThreads)
    rmsnorm_kernel(float* x, const float* delta, const float* __restrict__ weight, float* y, int64_t dim, float eps) {
  __shared__ float scratch[kWarp];
  pdl_launch_dependents();  // the GEMV after the norm may load its weights meanwhile
  float* xr = x + static_cast<int64_t>(blockIdx.x) * dim;
  float* yr = y + static_cast<int64_t>(blockIdx.x) * dim;
  float sum = 0.0f;
  for (int64_t i = threadIdx.x; i < dim; i += kThreads) {
    float v = xr[i];
    if (delta != nullptr) {
      v += delta[static_cast<int64_t>(blockIdx.x) * dim + i];
      xr[i] = v;  // each element is read back below by the thread that wrote it
    }
    sum += v * v;
  }
  sum = block_sum(sum, scratch);
  const float scale = 1.0f / sqrtf(sum / static_cast<float>(dim) + eps);
  for (int64_t i = threadIdx.x; i < dim; i += kThreads) {
    const float v = __fmul_rn(xr[i], scale);
    yr[i] = weight != nullptr ? __fmul_rn(v, weight[i]) : v;
  }
}

// Rows of dim % 4 == 0, dim <= 4 kThreads kPer, 16-byte aligned: each
// thread holds its float4s (4-element groups tid, tid + kThreads, ...) in
// registers, all loads issued before any is used (the kernel above waits one
// L2 round trip per element: ~9 us on a 4096-element row). y may alias x:
// every x is read before the barrier in block_sum, every y written after it.
template <bool kDelta, int kPer>
__global__ void __launch_bounds__(kThreads)
    rmsnorm4_kernel(float* x, const float* __restrict__ delta, const float* __restrict__ weight, float* y, int64_t dim,
                    float eps) {
  __shared__ float scratch[kWarp];
  pdl_launch_dependents();  // the GEMV after the norm may load its weights meanwhile
  const int64_t dim4 = dim / 4, row = static_cast<int64_t>(blockIdx.x) * dim4;
  float4* xr = reinterpret_cast<float4*>(x) + row;
  float4 v[kPer];
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int64_t i = threadIdx.x + static_cast<int64_t>(k) * kThreads;
    v[k] = i < dim4 ? xr[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }
  if constexpr (kDelta) {
    const float4* dr = reinterpret_cast<const float4*>(delta) + row;
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const int64_t i = threadIdx.x + static_cast<int64_t>(k) * kThreads;
      if (i < dim4) {
        const float4 d = __ldg(dr + i);
        v[k].x += d.x, v[k].y += d.y, v[k].z += d.z, v[k].w += d.w;
        xr[i] = v[k];
      }
    }
  }
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < kPer; ++k) sum += (v[k].x * v[k].x + v[k].y * v[k].y) + (v[k].z * v[k].z + v[k].w * v[k].w);
  sum = block_sum(sum, scratch);
  const float scale = 1.0f / sqrtf(sum / static_cast<float>(dim) + eps);
  float4* yr = reinterpret_cast<float4*>(y) + row;
  const float4* wr = reinterpret_cast<const float4*>(weight);
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int64_t i = threadIdx.x + static_cast<int64_t>(k) * kThreads;
    if (i >= dim4) continue;
    float4 o = make_float4(__fmul_rn(v[k].x, scale), __fmul_rn(v[k].y, scale), __fmul_rn(v[k].z, scale),
                           __fmul_rn(v[k].w, scale));
    if (weight != nullptr) {
      const float4 g = __ldg(wr + i);
      o = make_float4(__fmul_rn(o.x, g.x), __fmul_rn(o.y, g.y), __fmul_rn(o.z, g.z), __fmul_rn(o.w, g.w));
    }
    yr[i] = o;
  }
}

constexpr int kPer = 8;  // float4s per thread: rows up to 8192 elements

bool vector_rows(const void* a, const void* b, const void* c, const void* d, int64_t dim) {
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  return dim % 4 == 0 && dim <= 4 * kThreads * kPer && aligned(a) && aligned(b) && aligned(c) && aligned(d);
}

}  // namespace

Status rmsnorm(const float* x, const float* weight, float* y, int64_t n_rows, int64_t dim, float eps,
               cudaStream_t stream) {
  HEARTH_CUDA_REQUIRE(x != nullptr && y != nullptr);
  HEARTH_CUDA_REQUIRE(n_rows >= 0 && n_rows <= 0x7fffffff && dim > 0);
  if (n_rows == 0) return {};
  // x is only read when delta is null; the kernels take it as float* for the fused form.
  if (vector_rows(x, weight, y, nullptr, dim)) {
    rmsnorm4_kernel<false, kPer>
        <<<static_cast<unsigned>(n_rows), kThreads, 0, stream>>>(const_cast<float*>(x), nullptr, weight, y, dim, eps);
    return check_launch("rmsnorm4_kernel");
  }
  rmsnorm_kernel<<<static_cast<unsigned>(n_rows), kThreads, 0, stream>>>(const_cast<float*>(x), nullptr, weight, y, dim,
                                                                         eps);
  return check_launch("rmsnorm_kernel");
}

Status add_rmsnorm(float* x, const float* delta, const float* weight, float* y, int64_t n_rows, int64_t dim, float eps,
                   cudaStream_t stream) {
  HEARTH_CUDA_REQUIRE(x != nullptr && delta != nullptr && y != nullptr);
  HEARTH_CUDA_REQUIRE(y != x && y != delta);
  HEARTH_CUDA_REQUIRE(n_rows >= 0 && n_rows <= 0x7fffffff && dim > 0);
  if (n_rows == 0) return {};
  if (vector_rows(x, delta, weight, y, dim)) {
    rmsnorm4_kernel<true, kPer><<<static_cast<unsigned>(n_rows), kThreads, 0, stream>>>(x, delta, weight, y, dim, eps);
    return check_launch("rmsnorm4_kernel");
  }
  rmsnorm_kernel<<<static_cast<unsigned>(n_rows), kThreads, 0, stream>>>(x, delta, weight, y, dim, eps);
  return check_launch("rmsnorm_kernel");
}

}  // namespace hearth::kernels::cuda
