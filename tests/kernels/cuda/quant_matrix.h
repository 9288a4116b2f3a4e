// Random weight matrices in every CUDA-supported type, quantized on the host
// with the CPU quantizers, with their CPU-dequantized f32 values as reference.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "cuda_test_util.h"
#include "kernels/cpu/ggml_type.h"
#include "kernels/cpu/quant_ops.h"

namespace hearth::kernels::cuda::test {

inline const std::vector<GgmlType>& all_cuda_types() {
  static const std::vector<GgmlType> types = {GgmlType::kF32,  GgmlType::kF16,  GgmlType::kBF16, GgmlType::kQ4_0,
                                              GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ5_1, GgmlType::kQ8_0,
                                              GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K};
  return types;
}

struct HostMatrix {
  GgmlType type = GgmlType::kF32;
  int64_t rows = 0, cols = 0;
  size_t stride = 0;           // bytes per row (row_bytes + padding)
  std::vector<uint8_t> bytes;  // [rows][stride]
  std::vector<float> values;   // [rows][cols], the CPU dequantization
};

// pad: extra bytes per row (a multiple of 16 keeps every type's alignment).
inline HostMatrix make_matrix(std::mt19937& rng, GgmlType type, int64_t rows, int64_t cols, size_t pad = 0) {
  const QuantOps* ops = quant_ops(type);
  HostMatrix m;
  m.type = type, m.rows = rows, m.cols = cols;
  m.stride = row_bytes(type, cols) + pad;
  m.bytes.assign(static_cast<size_t>(rows) * m.stride, 0xa5);
  m.values.resize(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    const std::vector<float> src = random_floats(rng, cols);
    uint8_t* dst = m.bytes.data() + static_cast<size_t>(r) * m.stride;
    ops->quantize_row(src.data(), dst, cols);
    ops->dequant_row(dst, m.values.data() + r * cols, cols);
  }
  return m;
}

}  // namespace hearth::kernels::cuda::test
