// The gated linear units' per-element arithmetic, shared by the GLU kernels
// (glu.cu) and the q8 GEMV's prologue that computes them in place of a launch
// (gemv_fused_glu): one definition, so both give the same bits. The rounding
// steps are spelt out (no contraction left to the compiler's context).
#pragma once

#include <cuda_runtime.h>

namespace hearth::kernels::cuda {

// silu(g) * u = g / (1 + e^-g) * u
__device__ __forceinline__ float swiglu_value(float g, float u) {
  return __fmul_rn(__fdiv_rn(g, __fadd_rn(1.0f, expf(-g))), u);
}

// gelu_tanh(g) * u = g/2 (1 + tanh(sqrt(2/pi) g (1 + 0.044715 g^2))) * u
__device__ __forceinline__ float geglu_tanh_value(float g, float u) {
  constexpr float kSqrt2OverPi = 0.79788456080286535588f;
  const float inner = __fmul_rn(__fmul_rn(kSqrt2OverPi, g), __fadd_rn(1.0f, __fmul_rn(__fmul_rn(0.044715f, g), g)));
  return __fmul_rn(__fmul_rn(__fmul_rn(0.5f, g), __fadd_rn(1.0f, tanhf(inner))), u);
}

// The GLU of kind (0: SwiGLU, 1: GeGLU tanh; GemvInputGlu's kinds) of 4 lanes.
__device__ __forceinline__ float4 glu4(float4 g, float4 u, int kind) {
  if (kind == 0) {
    return make_float4(swiglu_value(g.x, u.x), swiglu_value(g.y, u.y), swiglu_value(g.z, u.z), swiglu_value(g.w, u.w));
  }
  return make_float4(geglu_tanh_value(g.x, u.x), geglu_tanh_value(g.y, u.y), geglu_tanh_value(g.z, u.z),
                     geglu_tanh_value(g.w, u.w));
}

}  // namespace hearth::kernels::cuda
