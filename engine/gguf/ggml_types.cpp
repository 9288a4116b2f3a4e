#include "engine/gguf/ggml_types.h"

#include <algorithm>
#include <limits>

namespace hearth::gguf {
namespace {

constexpr std::uint64_t kMax63 = std::numeric_limits<std::int64_t>::max();

}  // namespace

std::string ggml_type_name(std::uint32_t id) {
  if (const kernels::TypeTraits* t = kernels::type_traits_from_id(id)) return std::string(t->name);
  return "type#" + std::to_string(id);
}

Result<std::uint64_t> ggml_row_bytes(GgmlType type, std::uint64_t row_elems) {
  const kernels::TypeTraits* t = kernels::type_traits(type);
  if (t == nullptr) {
    return make_error(ErrorCode::kUnsupported, "unknown ggml type " + ggml_type_name(type));
  }
  const auto block_elems = static_cast<std::uint64_t>(t->block_elems);
  if (row_elems % block_elems != 0) {
    return make_error(ErrorCode::kCorruptFile, "row of " + std::to_string(row_elems) +
                                                   " elements is not a multiple of " + std::string(t->name) +
                                                   " block size " + std::to_string(t->block_elems));
  }
  const std::uint64_t blocks = row_elems / block_elems;
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
