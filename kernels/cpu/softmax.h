// Numerically stable softmax of a row, in place: exp(x - max) / sum.
#pragma once

#include <cstdint>

namespace hearth::kernels {

// x: [n], n >= 1. -inf entries (masked) get probability 0; at least one entry
// must be finite. The sum is accumulated in double.
void softmax(float* x, int64_t n);

}  // namespace hearth::kernels
