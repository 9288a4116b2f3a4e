// GGML tensor element types as stored in GGUF tensor infos, and their block
// geometry. Ids and block sizes follow ggml (checked against the Python `gguf`
// package's GGML_QUANT_SIZES by tests/engine/gguf/ggml_types_oracle.py).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "hearth/result.h"

namespace hearth::gguf {

// Serialized in GGUF files: the values are ggml's, do not change or reuse them.
enum class GgmlType : std::uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
  MXFP4 = 39,
  NVFP4 = 40,
  Q1_0 = 41,
};

struct GgmlTypeTraits {
  GgmlType type;
  std::string_view name;      // ggml's spelling: "Q4_K", "BF16", ...
  std::uint32_t block_elems;  // elements per block (1 for plain types)
  std::uint32_t block_bytes;  // bytes per block
  bool computable;            // Hearth has kernels for it
};

// Traits of a known type id, or nullptr for an id ggml does not define.
const GgmlTypeTraits* ggml_type_traits(std::uint32_t id);
inline const GgmlTypeTraits* ggml_type_traits(GgmlType type) {
  return ggml_type_traits(static_cast<std::uint32_t>(type));
}

// Every known type, ordered by id.
std::span<const GgmlTypeTraits> all_ggml_types();

// "Q4_K" for a known id, "type#<id>" otherwise (safe for messages).
std::string ggml_type_name(std::uint32_t id);
inline std::string ggml_type_name(GgmlType type) {
  return ggml_type_name(static_cast<std::uint32_t>(type));
}

// Bytes of one row of `row_elems` elements. Errors: unknown type (kUnsupported),
// row_elems not a multiple of the block size (kCorruptFile), overflow (kCorruptFile).
Result<std::uint64_t> ggml_row_bytes(GgmlType type, std::uint64_t row_elems);

// Bytes of a tensor of shape ne[0..n) (ne[0] contiguous). Dimensions may be 0
// (an empty tensor, 0 bytes). Same errors as ggml_row_bytes; the element count
// and byte size must fit in 63 bits.
Result<std::uint64_t> ggml_tensor_bytes(GgmlType type, std::span<const std::int64_t> ne);

}  // namespace hearth::gguf
