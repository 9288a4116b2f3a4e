// Checked sizes of GGUF tensors (untrusted shapes) over the ggml type table,
// which is checked against the Python `gguf` package's GGML_QUANT_SIZES by
// tests/engine/gguf/gguf_oracle.py.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "hearth/result.h"
#include "kernels/cpu/ggml_type.h"

namespace hearth::gguf {

// The one type list lives with the kernels (kernels/cpu/ggml_type.h): the
// reader sizes tensors with the same table the kernels dispatch on.
using GgmlType = kernels::GgmlType;

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
