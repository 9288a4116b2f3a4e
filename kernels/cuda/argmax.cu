#include "kernels/cuda/argmax.h"
#include "kernels/cuda/device_common.cuh"

namespace hearth::kernels::cuda {
namespace {

constexpr int kThreads = 1024;
constexpr int32_t kNone = 0x7fffffff;

// (v, i) beats (bv, bi) when larger, or equal with a lower index. NaN never wins.
__device__ __forceinline__ void take_better(float v, int32_t i, float& bv, int32_t& bi) {
  if (v > bv || (v == bv && i < bi)) bv = v, bi = i;
}

__global__ void __launch_bounds__(kThreads)
    argmax_kernel(const float* __restrict__ logits, int64_t n_vocab, int32_t* __restrict__ out) {
  __shared__ float s_val[kThreads / kWarp];
  __shared__ int32_t s_idx[kThreads / kWarp];
  const float* row = logits + static_cast<int64_t>(blockIdx.x) * n_vocab;
  float bv = -INFINITY;
  int32_t bi = kNone;
  for (int64_t i = threadIdx.x; i < n_vocab; i += kThreads) take_better(row[i], static_cast<int32_t>(i), bv, bi);
  for (int off = kWarp / 2; off > 0; off /= 2) {
    take_better(__shfl_xor_sync(0xffffffffu, bv, off), __shfl_xor_sync(0xffffffffu, bi, off), bv, bi);
  }
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  if (lane == 0) s_val[warp] = bv, s_idx[warp] = bi;
  __syncthreads();
  if (warp == 0) {
    bv = s_val[lane];
    bi = s_idx[lane];
    for (int off = kWarp / 2; off > 0; off /= 2) {
      take_better(__shfl_xor_sync(0xffffffffu, bv, off), __shfl_xor_sync(0xffffffffu, bi, off), bv, bi);
    }
    if (lane == 0) out[blockIdx.x] = bi == kNone ? 0 : bi;
  }
}

}  // namespace

Status argmax(const float* logits, int64_t n_rows, int64_t n_vocab, int32_t* out, cudaStream_t stream) {
  HEARTH_CUDA_REQUIRE(logits != nullptr && out != nullptr);
  HEARTH_CUDA_REQUIRE(n_rows >= 0 && n_rows <= 0x7fffffff);
  HEARTH_CUDA_REQUIRE(n_vocab > 0 && n_vocab < kNone);
  if (n_rows == 0) return {};
  argmax_kernel<<<static_cast<unsigned>(n_rows), kThreads, 0, stream>>>(logits, n_vocab, out);
  return check_launch("argmax_kernel");
}

}  // namespace hearth::kernels::cuda
