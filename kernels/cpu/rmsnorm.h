// RMSNorm: y = x / sqrt(mean(x^2) + eps) * weight, per row.
#pragma once

#include <cstdint>

namespace hearth::kernels {

// x, y: [n_rows][dim] (y may alias x); weight: [dim], or null for none.
// The sum of squares is accumulated in double (as ggml does), the scaling in f32.
void rmsnorm(const float* x, const float* weight, float* y, int64_t n_rows, int64_t dim, float eps);

}  // namespace hearth::kernels
