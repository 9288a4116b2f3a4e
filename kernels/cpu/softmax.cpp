#include "kernels/cpu/softmax.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace hearth::kernels {

void softmax(float* x, int64_t n) {
  assert(n >= 1);
  const float max = *std::max_element(x, x + n);
  assert(std::isfinite(max));
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max);
    sum += x[i];
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

}  // namespace hearth::kernels
