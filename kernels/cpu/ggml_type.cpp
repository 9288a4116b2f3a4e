#include "kernels/cpu/ggml_type.h"

#include <cassert>

#include "kernels/cpu/quant_blocks.h"

namespace hearth::kernels {
namespace {

constexpr TypeTraits kF32{"F32", 1, 4};
constexpr TypeTraits kF16{"F16", 1, 2};
constexpr TypeTraits kBF16{"BF16", 1, 2};
constexpr TypeTraits kQ4_0{"Q4_0", kQK32, sizeof(BlockQ4_0)};
constexpr TypeTraits kQ4_1{"Q4_1", kQK32, sizeof(BlockQ4_1)};
constexpr TypeTraits kQ5_0{"Q5_0", kQK32, sizeof(BlockQ5_0)};
constexpr TypeTraits kQ5_1{"Q5_1", kQK32, sizeof(BlockQ5_1)};
constexpr TypeTraits kQ8_0{"Q8_0", kQK32, sizeof(BlockQ8_0)};
constexpr TypeTraits kQ8_1{"Q8_1", kQK32, sizeof(BlockQ8_1)};
constexpr TypeTraits kQ4_K{"Q4_K", kQKK, sizeof(BlockQ4_K)};
constexpr TypeTraits kQ5_K{"Q5_K", kQKK, sizeof(BlockQ5_K)};
constexpr TypeTraits kQ6_K{"Q6_K", kQKK, sizeof(BlockQ6_K)};
constexpr TypeTraits kQ8_K{"Q8_K", kQKK, sizeof(BlockQ8_K)};

}  // namespace

const TypeTraits* type_traits(GgmlType type) {
  switch (type) {
    case GgmlType::kF32:
      return &kF32;
    case GgmlType::kF16:
      return &kF16;
    case GgmlType::kBF16:
      return &kBF16;
    case GgmlType::kQ4_0:
      return &kQ4_0;
    case GgmlType::kQ4_1:
      return &kQ4_1;
    case GgmlType::kQ5_0:
      return &kQ5_0;
    case GgmlType::kQ5_1:
      return &kQ5_1;
    case GgmlType::kQ8_0:
      return &kQ8_0;
    case GgmlType::kQ8_1:
      return &kQ8_1;
    case GgmlType::kQ4_K:
      return &kQ4_K;
    case GgmlType::kQ5_K:
      return &kQ5_K;
    case GgmlType::kQ6_K:
      return &kQ6_K;
    case GgmlType::kQ8_K:
      return &kQ8_K;
  }
  return nullptr;
}

const TypeTraits* type_traits_from_id(uint32_t id) {
  return type_traits(static_cast<GgmlType>(id));
}

size_t row_bytes(GgmlType type, int64_t n) {
  const TypeTraits* t = type_traits(type);
  assert(t != nullptr && n >= 0 && n % t->block_elems == 0);
  return static_cast<size_t>(n / t->block_elems) * t->block_bytes;
}

}  // namespace hearth::kernels
