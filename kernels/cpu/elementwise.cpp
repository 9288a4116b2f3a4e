#include "kernels/cpu/elementwise.h"

namespace hearth::kernels {

void add(const float* a, const float* b, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

void mul(const float* a, const float* b, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] * b[i];
}

void scale(const float* a, float s, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] * s;
}

void add_scaled(float* acc, const float* x, float s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) acc[i] += s * x[i];
}

}  // namespace hearth::kernels
