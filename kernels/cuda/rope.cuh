// The rotation of one head by RoPE, shared by rope_kernel and the fused
// rope + store-KV kernel (store_kv.cu), so both compute the same bits.
// Include only from .cu files.
#pragma once

#include <cstdint>

namespace hearth::kernels::cuda {

// v: one head of head_dim floats, rotated in place by position `pos`; the
// block's threads take pairs i = threadIdx.x, + n_threads, ... < half.
// Angles as the CPU builds them: theta_i = pos freq_scale, times theta_scale
// i times in f32.
__device__ __forceinline__ void rope_head(float* v, int32_t pos, int half, bool neox, float freq_scale,
                                          float theta_scale, int n_threads) {
  const float theta0 = static_cast<float>(pos) * freq_scale;
  for (int i = threadIdx.x; i < half; i += n_threads) {
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

}  // namespace hearth::kernels::cuda
