// Tensor element types, numbered exactly as ggml / GGUF number them so a GGUF
// tensor's type field converts directly. Serialized ids: do not change or reuse.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hearth::kernels {

enum class GgmlType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,  // activations only
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,  // activations only
  kBF16 = 30,
};

struct TypeTraits {
  const char* name;     // "Q4_K", as ggml spells it
  int64_t block_elems;  // elements per block (1 for float types)
  size_t block_bytes;   // bytes per block
};

// Traits of a type this layer knows; nullptr for any other id (a GGUF may
// carry types we do not support: the caller turns that into an error).
const TypeTraits* type_traits(GgmlType type);
const TypeTraits* type_traits_from_id(uint32_t id);

// Bytes of a row of n elements. Precondition: the type is known and n is a
// multiple of its block_elems.
size_t row_bytes(GgmlType type, int64_t n);

}  // namespace hearth::kernels
