// RMSNorm per row, alone or fused with the residual add that precedes it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/status.h"

namespace hearth::kernels::cuda {

// y = x / sqrt(mean(x^2) + eps) * weight, per row. x, y: [n_rows][dim] (y may
// alias x); weight: [dim] or null. Sum of squares in f32 (a tree, not a chain).
Status rmsnorm(const float* x, const float* weight, float* y, int64_t n_rows, int64_t dim, float eps,
               cudaStream_t stream);

// The residual step then the next norm, in one pass over the row:
// x += delta (x is the residual stream, updated in place), then y = rmsnorm(x) * weight.
// x, delta, y: [n_rows][dim]; y must not alias x or delta.
Status add_rmsnorm(float* x, const float* delta, const float* weight, float* y, int64_t n_rows, int64_t dim, float eps,
                   cudaStream_t stream);

}  // namespace hearth::kernels::cuda
