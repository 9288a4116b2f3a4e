#include "kernels/cpu/ggml_type.h"

#include <algorithm>
#include <array>
#include <cassert>

#include "kernels/cpu/quant_blocks.h"

namespace hearth::kernels {
namespace {

using T = GgmlType;
constexpr TypeUse kW = TypeUse::kWeights;
constexpr TypeUse kA = TypeUse::kActivations;
constexpr TypeUse kN = TypeUse::kNone;

// Ordered by id (all_types() and the binary search rely on it). Geometry of
// the types without kernels is ggml's, for sizing tensors of files we refuse.
constexpr std::array<TypeTraits, 34> kTraits{{
    {T::kF32, "F32", 1, 4, kW},
    {T::kF16, "F16", 1, 2, kW},
    {T::kQ4_0, "Q4_0", kQK32, sizeof(BlockQ4_0), kW},
    {T::kQ4_1, "Q4_1", kQK32, sizeof(BlockQ4_1), kW},
    {T::kQ5_0, "Q5_0", kQK32, sizeof(BlockQ5_0), kW},
    {T::kQ5_1, "Q5_1", kQK32, sizeof(BlockQ5_1), kW},
    {T::kQ8_0, "Q8_0", kQK32, sizeof(BlockQ8_0), kW},
    {T::kQ8_1, "Q8_1", kQK32, sizeof(BlockQ8_1), kA},
    {T::kQ2_K, "Q2_K", 256, 84, kN},
    {T::kQ3_K, "Q3_K", 256, 110, kN},
    {T::kQ4_K, "Q4_K", kQKK, sizeof(BlockQ4_K), kW},
    {T::kQ5_K, "Q5_K", kQKK, sizeof(BlockQ5_K), kW},
    {T::kQ6_K, "Q6_K", kQKK, sizeof(BlockQ6_K), kW},
    {T::kQ8_K, "Q8_K", kQKK, sizeof(BlockQ8_K), kA},
    {T::kIQ2_XXS, "IQ2_XXS", 256, 66, kN},
    {T::kIQ2_XS, "IQ2_XS", 256, 74, kN},
    {T::kIQ3_XXS, "IQ3_XXS", 256, 98, kN},
    {T::kIQ1_S, "IQ1_S", 256, 50, kN},
    {T::kIQ4_NL, "IQ4_NL", 32, 18, kN},
    {T::kIQ3_S, "IQ3_S", 256, 110, kN},
    {T::kIQ2_S, "IQ2_S", 256, 82, kN},
    {T::kIQ4_XS, "IQ4_XS", 256, 136, kN},
    {T::kI8, "I8", 1, 1, kN},
    {T::kI16, "I16", 1, 2, kN},
    {T::kI32, "I32", 1, 4, kN},
    {T::kI64, "I64", 1, 8, kN},
    {T::kF64, "F64", 1, 8, kN},
    {T::kIQ1_M, "IQ1_M", 256, 56, kN},
    {T::kBF16, "BF16", 1, 2, kW},
    {T::kTQ1_0, "TQ1_0", 256, 54, kN},
    {T::kTQ2_0, "TQ2_0", 256, 66, kN},
    {T::kMXFP4, "MXFP4", 32, 17, kN},
    {T::kNVFP4, "NVFP4", 64, 36, kN},
    {T::kQ1_0, "Q1_0", 128, 18, kN},
}};

// ggml's block sizes for the types we compute with (the structs above must
// match the file format byte for byte).
static_assert(sizeof(BlockQ4_0) == 18 && sizeof(BlockQ4_1) == 20 && sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24 && sizeof(BlockQ8_0) == 34 && sizeof(BlockQ8_1) == 36);
static_assert(sizeof(BlockQ4_K) == 144 && sizeof(BlockQ5_K) == 176 && sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockQ8_K) == 292 && kQK32 == 32 && kQKK == 256);

constexpr bool ordered_by_id() {
  for (size_t i = 1; i < kTraits.size(); ++i) {
    if (static_cast<uint32_t>(kTraits[i - 1].type) >= static_cast<uint32_t>(kTraits[i].type)) return false;
  }
  return true;
}
static_assert(ordered_by_id());

}  // namespace

const TypeTraits* type_traits_from_id(uint32_t id) {
  const auto* it = std::lower_bound(kTraits.begin(), kTraits.end(), id,
                                    [](const TypeTraits& t, uint32_t x) { return static_cast<uint32_t>(t.type) < x; });
  if (it == kTraits.end() || static_cast<uint32_t>(it->type) != id) return nullptr;
  return &*it;
}

const TypeTraits* type_traits(GgmlType type) {
  return type_traits_from_id(static_cast<uint32_t>(type));
}

bool is_weight_type(GgmlType type) {
  const TypeTraits* t = type_traits(type);
  return t != nullptr && t->use == TypeUse::kWeights;
}

TypeRange all_types() {
  return {kTraits.data(), kTraits.data() + kTraits.size()};
}

size_t row_bytes(GgmlType type, int64_t n) {
  const TypeTraits* t = type_traits(type);
  assert(t != nullptr && n >= 0 && n % t->block_elems == 0);
  return static_cast<size_t>(n / t->block_elems) * t->block_bytes;
}

}  // namespace hearth::kernels
