// A weight matrix in device memory, in its GGUF (ggml) block layout.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/ggml_type.h"
#include "kernels/cuda/status.h"

namespace hearth::kernels::cuda {

// Row-major [rows][cols]: each row holds cols / block_elems blocks of `type`,
// rows start row_stride bytes apart. The kernels read a row in units of 32
// elements, so cols must be a multiple of 32 (256 for the K-quants).
struct DeviceMatrix {
  GgmlType type = GgmlType::kF32;
  const void* data = nullptr;  // device pointer, 16-byte aligned
  int64_t rows = 0;
  int64_t cols = 0;
  size_t row_stride = 0;  // bytes; >= row_bytes(type, cols); a multiple of 16 for F32/F16/BF16,
                          // of 4 for Q4_K/Q5_K (whole 144/176-byte blocks: GGUF rows are), even otherwise
};

// True for the types the CUDA kernels read (F32, F16, BF16, Q4_0, Q4_1, Q5_0,
// Q5_1, Q8_0, Q4_K, Q5_K, Q6_K).
bool cuda_supports_type(GgmlType type);

// Checks type, shape, stride and alignment as the kernels require them.
Status validate_matrix(const DeviceMatrix& m);

}  // namespace hearth::kernels::cuda
