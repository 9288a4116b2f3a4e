#include "kernels/cuda/device_matrix.h"

namespace hearth::kernels::cuda {

bool cuda_supports_type(GgmlType type) {
  switch (type) {
    case GgmlType::kF32:
    case GgmlType::kF16:
    case GgmlType::kBF16:
    case GgmlType::kQ4_0:
    case GgmlType::kQ4_1:
    case GgmlType::kQ5_0:
    case GgmlType::kQ5_1:
    case GgmlType::kQ8_0:
    case GgmlType::kQ4_K:
    case GgmlType::kQ5_K:
    case GgmlType::kQ6_K:
      return true;
    default:
      return false;
  }
}

Status validate_matrix(const DeviceMatrix& m) {
  if (!cuda_supports_type(m.type)) return invalid_argument("matrix type not supported by the CUDA kernels");
  if (m.data == nullptr) return invalid_argument("matrix data is null");
  if (reinterpret_cast<uintptr_t>(m.data) % 16 != 0) return invalid_argument("matrix data must be 16-byte aligned");
  if (m.rows <= 0 || m.cols <= 0) return invalid_argument("matrix rows and cols must be positive");
  const TypeTraits* t = type_traits(m.type);
  if (m.cols % 32 != 0 || m.cols % t->block_elems != 0) {
    return invalid_argument("matrix cols must be a multiple of 32 and of the type's block size");
  }
  if (m.row_stride < row_bytes(m.type, m.cols)) return invalid_argument("matrix row_stride below the row's bytes");
  const bool is_float = t->block_elems == 1;
  const bool word_blocks = m.type == GgmlType::kQ4_K || m.type == GgmlType::kQ5_K;  // read as aligned words
  if (m.row_stride % (is_float ? 16 : word_blocks ? 4 : 2) != 0) {
    return invalid_argument(
        "matrix row_stride must be a multiple of 16 (float types), 4 (Q4_K, Q5_K) or 2 (other quantized types)");
  }
  return {};
}

}  // namespace hearth::kernels::cuda
