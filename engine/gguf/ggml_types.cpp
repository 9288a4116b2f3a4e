#include "engine/gguf/ggml_types.h"

#include <algorithm>
#include <array>
#include <limits>

namespace hearth::gguf {
namespace {

// Ordered by id. Block geometry from ggml (see the header).
constexpr std::array<GgmlTypeTraits, 34> kTraits{{
    {GgmlType::F32, "F32", 1, 4, true},
    {GgmlType::F16, "F16", 1, 2, true},
    {GgmlType::Q4_0, "Q4_0", 32, 18, true},
    {GgmlType::Q4_1, "Q4_1", 32, 20, true},
    {GgmlType::Q5_0, "Q5_0", 32, 22, true},
    {GgmlType::Q5_1, "Q5_1", 32, 24, true},
    {GgmlType::Q8_0, "Q8_0", 32, 34, true},
    {GgmlType::Q8_1, "Q8_1", 32, 40, false},
    {GgmlType::Q2_K, "Q2_K", 256, 84, false},
    {GgmlType::Q3_K, "Q3_K", 256, 110, false},
    {GgmlType::Q4_K, "Q4_K", 256, 144, true},
    {GgmlType::Q5_K, "Q5_K", 256, 176, true},
    {GgmlType::Q6_K, "Q6_K", 256, 210, true},
    {GgmlType::Q8_K, "Q8_K", 256, 292, false},
    {GgmlType::IQ2_XXS, "IQ2_XXS", 256, 66, false},
    {GgmlType::IQ2_XS, "IQ2_XS", 256, 74, false},
    {GgmlType::IQ3_XXS, "IQ3_XXS", 256, 98, false},
    {GgmlType::IQ1_S, "IQ1_S", 256, 50, false},
    {GgmlType::IQ4_NL, "IQ4_NL", 32, 18, false},
    {GgmlType::IQ3_S, "IQ3_S", 256, 110, false},
    {GgmlType::IQ2_S, "IQ2_S", 256, 82, false},
    {GgmlType::IQ4_XS, "IQ4_XS", 256, 136, false},
    {GgmlType::I8, "I8", 1, 1, false},
    {GgmlType::I16, "I16", 1, 2, false},
    {GgmlType::I32, "I32", 1, 4, false},
    {GgmlType::I64, "I64", 1, 8, false},
    {GgmlType::F64, "F64", 1, 8, false},
    {GgmlType::IQ1_M, "IQ1_M", 256, 56, false},
    {GgmlType::BF16, "BF16", 1, 2, true},
    {GgmlType::TQ1_0, "TQ1_0", 256, 54, false},
    {GgmlType::TQ2_0, "TQ2_0", 256, 66, false},
    {GgmlType::MXFP4, "MXFP4", 32, 17, false},
    {GgmlType::NVFP4, "NVFP4", 64, 36, false},
    {GgmlType::Q1_0, "Q1_0", 128, 18, false},
}};

constexpr std::uint64_t kMax63 = std::numeric_limits<std::int64_t>::max();

}  // namespace

const GgmlTypeTraits* ggml_type_traits(std::uint32_t id) {
  auto it = std::lower_bound(kTraits.begin(), kTraits.end(), id, [](const GgmlTypeTraits& t, std::uint32_t x) {
    return static_cast<std::uint32_t>(t.type) < x;
  });
  if (it == kTraits.end() || static_cast<std::uint32_t>(it->type) != id) return nullptr;
  return &*it;
}

std::span<const GgmlTypeTraits> all_ggml_types() {
  return kTraits;
}

std::string ggml_type_name(std::uint32_t id) {
  if (const GgmlTypeTraits* t = ggml_type_traits(id)) return std::string(t->name);
  return "type#" + std::to_string(id);
}

Result<std::uint64_t> ggml_row_bytes(GgmlType type, std::uint64_t row_elems) {
  const GgmlTypeTraits* t = ggml_type_traits(type);
  if (t == nullptr) {
    return make_error(ErrorCode::kUnsupported, "unknown ggml type " + ggml_type_name(type));
  }
  if (row_elems % t->block_elems != 0) {
    return make_error(ErrorCode::kCorruptFile, "row of " + std::to_string(row_elems) +
                                                   " elements is not a multiple of " + std::string(t->name) +
                                                   " block size " + std::to_string(t->block_elems));
  }
  const std::uint64_t blocks = row_elems / t->block_elems;
  if (blocks > kMax63 / t->block_bytes) {
    return make_error(ErrorCode::kCorruptFile, "row of " + std::to_string(row_elems) + " " + std::string(t->name) +
                                                   " elements overflows the byte size");
  }
  return blocks * t->block_bytes;
}

Result<std::uint64_t> ggml_tensor_bytes(GgmlType type, std::span<const std::int64_t> ne) {
  std::uint64_t row_elems = ne.empty() ? 1 : 0;
  std::uint64_t elems = 1;
  for (std::size_t i = 0; i < ne.size(); ++i) {
    if (ne[i] < 0) {
      return make_error(ErrorCode::kCorruptFile,
                        "dimension " + std::to_string(i) + " is negative (" + std::to_string(ne[i]) + ")");
    }
    const auto d = static_cast<std::uint64_t>(ne[i]);
    if (d != 0 && elems > kMax63 / d) {
      return make_error(ErrorCode::kCorruptFile, "element count overflows at dimension " + std::to_string(i));
    }
    elems *= d;
    if (i == 0) row_elems = d;
  }
  HEARTH_ASSIGN_OR_RETURN(const std::uint64_t row, ggml_row_bytes(type, row_elems));
  if (elems == 0) return std::uint64_t{0};
  const std::uint64_t rows = elems / row_elems;  // row_elems != 0 here since elems != 0
  if (row != 0 && rows > kMax63 / row) {
    return make_error(ErrorCode::kCorruptFile, "tensor byte size overflows (" + std::to_string(rows) + " rows of " +
                                                   std::to_string(row) + " bytes)");
  }
  return rows * row;
}

}  // namespace hearth::gguf
