// Element-wise row operations of the forward pass (residual adds, scaling).
// All take n elements; out may alias an input.
#pragma once

#include <cstdint>

namespace hearth::kernels {

void add(const float* a, const float* b, float* out, int64_t n);  // out = a + b
void mul(const float* a, const float* b, float* out, int64_t n);  // out = a * b
void scale(const float* a, float s, float* out, int64_t n);       // out = a * s
void add_scaled(float* acc, const float* x, float s, int64_t n);  // acc += s * x

}  // namespace hearth::kernels
