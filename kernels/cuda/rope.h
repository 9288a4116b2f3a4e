// Rotary position embedding on the device, in place; the conventions (pair
// order, angles) are the CPU kernel's: kernels/cpu/rope.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cpu/rope.h"
#include "kernels/cuda/status.h"

namespace hearth::kernels::cuda {

// x: [n_tokens][n_heads][p.head_dim] f32, rotated in place; positions: [n_tokens]
// device int32 (each token's position in its sequence). Angles are built as the
// CPU builds them (theta_i = p freq_scale, multiplied by base^(-2/n_rot) i times
// in f32), so they match it bit for bit; sin/cos differ by at most 2 ulp.
Status rope(float* x, int64_t n_tokens, int n_heads, const int32_t* positions, const RopeParams& p,
            cudaStream_t stream);

}  // namespace hearth::kernels::cuda
