#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/rope.cuh"
#include "kernels/cuda/rope.h"

#include <cmath>

namespace hearth::kernels::cuda {
namespace {

constexpr int kThreads = 128;

// grid: (token, head); threads: rotated pairs i < n_rot / 2.
__global__ void __launch_bounds__(kThreads) rope_kernel(float* x, const int32_t* __restrict__ positions, int head_dim,
                                                        int half, bool neox, float freq_scale, float theta_scale) {
  const int64_t t = blockIdx.x;
  rope_head(x + (t * gridDim.y + blockIdx.y) * head_dim, positions[t], half, neox, freq_scale, theta_scale, kThreads);
}

}  // namespace

Status rope(float* x, int64_t n_tokens, int n_heads, const int32_t* positions, const RopeParams& p,
            cudaStream_t stream) {
  HEARTH_CUDA_REQUIRE(x != nullptr && positions != nullptr);
  HEARTH_CUDA_REQUIRE(p.n_rot > 0 && p.n_rot % 2 == 0 && p.n_rot <= p.head_dim);
  HEARTH_CUDA_REQUIRE(n_heads > 0 && n_heads <= 65535);
  HEARTH_CUDA_REQUIRE(n_tokens >= 0 && n_tokens <= 0x7fffffff);
  if (n_tokens == 0) return {};
  const float theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_rot));
  const dim3 grid(static_cast<unsigned>(n_tokens), static_cast<unsigned>(n_heads));
  rope_kernel<<<grid, kThreads, 0, stream>>>(x, positions, p.head_dim, p.n_rot / 2, p.order == RopeOrder::kNeox,
                                             p.freq_scale, theta_scale);
  return check_launch("rope_kernel");
}

}  // namespace hearth::kernels::cuda
