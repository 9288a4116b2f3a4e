#include "kernels/cpu/rmsnorm.h"

#include <cmath>

namespace hearth::kernels {

void rmsnorm(const float* x, const float* weight, float* y, int64_t n_rows, int64_t dim, float eps) {
  for (int64_t r = 0; r < n_rows; ++r, x += dim, y += dim) {
    double sum = 0.0;
    for (int64_t i = 0; i < dim; ++i) sum += static_cast<double>(x[i]) * x[i];
    const float mean = static_cast<float>(sum / static_cast<double>(dim));
    const float scale = 1.0f / std::sqrt(mean + eps);
    if (weight != nullptr) {
      for (int64_t i = 0; i < dim; ++i) y[i] = x[i] * scale * weight[i];
    } else {
      for (int64_t i = 0; i < dim; ++i) y[i] = x[i] * scale;
    }
  }
}

}  // namespace hearth::kernels
