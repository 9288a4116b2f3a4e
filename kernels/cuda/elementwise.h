// Element-wise f32 operations of the forward pass: residual adds, biases, scaling.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/status.h"

namespace hearth::kernels::cuda {

// out[i] = a[i] + b[i], i < n. out may alias a or b.
Status add(const float* a, const float* b, float* out, int64_t n, cudaStream_t stream);

// x[i] *= s, i < n (gemma's embedding scale).
Status scale(float* x, float s, int64_t n, cudaStream_t stream);

// x[r][c] += bias[c] for r < n_rows, c < dim (QKV bias). x: [n_rows][dim]; bias: [dim].
Status add_bias(float* x, const float* bias, int64_t n_rows, int64_t dim, cudaStream_t stream);

// out[0] = max |a[i]|, out[1] = max |b[i]| over i < n (0 for n = 0; NaNs are
// passed over). out: 2 floats of device memory. For choosing the fp8 KV scales.
Status abs_max2(const float* a, const float* b, int64_t n, float* out, cudaStream_t stream);

}  // namespace hearth::kernels::cuda
