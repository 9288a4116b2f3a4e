#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/rope.h"

#include <cmath>

namespace hearth::kernels::cuda {
namespace {

constexpr int kThreads = 128;

// grid: (token, head); threads: rotated pairs i < n_rot / 2.
__global__ void __launch_bounds__(kThreads) rope_kernel(float* x, const int32_t* __restrict__ positions, int head_dim,
                                                        int half, bool neox, float freq_scale, float theta_scale) {
  const int64_t t = blockIdx.x;
  float* v = x + (t * gridDim.y + blockIdx.y) * head_dim;
  const float theta0 = static_cast<float>(positions[t]) * freq_scale;
  for (int i = threadIdx.x; i < half; i += kThreads) {
    float theta = theta0;
    for (int k = 0; k < i; ++k) theta = __fmul_rn(theta, theta_scale);  // the CPU's running product
    float s = 0.0f, c = 0.0f;
    sincosf(theta, &s, &c);
    const int a = neox ? i : 2 * i;
    const int b = neox ? i + half : 2 * i + 1;
    const float x0 = v[a], x1 = v[b];
    v[a] = __fsub_rn(__fmul_rn(x0, c), __fmul_rn(x1, s));
    v[b] = __fadd_rn(__fmul_rn(x0, s), __fmul_rn(x1, c));
  }
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
