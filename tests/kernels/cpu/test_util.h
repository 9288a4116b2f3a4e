// Shared helpers for the CPU kernel tests: seeded random data and error norms.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/quant_ops.h"

namespace hearth::kernels::test {

// Gaussian values, never all zero; a few outliers so block maxima vary.
inline std::vector<float> random_floats(std::mt19937& rng, int64_t n, float sigma = 1.0f) {
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  std::uniform_int_distribution<int64_t> pick(0, n - 1);
  for (int k = 0; k < n / 64; ++k) v[static_cast<size_t>(pick(rng))] *= 4.0f;
  return v;
}

// Normalised mean squared error sum((a-b)^2) / sum(b^2).
inline double nmse(const float* a, const float* b, int64_t n) {
  double num = 0.0, den = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    num += d * d;
    den += static_cast<double>(b[i]) * b[i];
  }
  return den > 0 ? num / den : num;
}

inline double max_rel_err(const float* a, const float* b, int64_t n) {
  double worst = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = std::fabs(static_cast<double>(a[i]) - b[i]) / std::max(1e-6, std::fabs(static_cast<double>(b[i])));
    worst = std::max(worst, d);
  }
  return worst;
}

// A weight matrix of `type` quantized (scalar quantizer) from random_floats
// rows, with the bytes it points into.
struct RandomMatrix {
  std::vector<uint8_t> bytes;
  WeightMatrix m;
};

inline RandomMatrix random_matrix(std::mt19937& rng, GgmlType type, int64_t rows, int64_t cols) {
  const QuantOps& ops = *quant_ops(type, CpuLevel::kScalar);
  RandomMatrix w;
  const size_t stride = row_bytes(type, cols);
  w.bytes.resize(stride * static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    const std::vector<float> row = random_floats(rng, cols);
    ops.quantize_row(row.data(), w.bytes.data() + static_cast<size_t>(r) * stride, cols);
  }
  w.m = WeightMatrix{type, w.bytes.data(), rows, cols, stride};
  return w;
}

// The SIMD levels this CPU can run, scalar first.
inline std::vector<CpuLevel> runnable_levels() {
  std::vector<CpuLevel> levels{CpuLevel::kScalar};
  if (static_cast<int>(cpu_level()) >= 1) levels.push_back(CpuLevel::kAvx2);
  if (static_cast<int>(cpu_level()) >= 2) levels.push_back(CpuLevel::kAvx512);
  return levels;
}

}  // namespace hearth::kernels::test
