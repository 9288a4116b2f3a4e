// The one list of tensor element types, numbered exactly as ggml / GGUF number
// them so a GGUF tensor's type field converts directly, with their block
// geometry. engine/gguf reads files through it; the kernels dispatch on it.
// Serialized ids: do not change or reuse. The block sizes are checked against
// the Python `gguf` package's GGML_QUANT_SIZES (tests/engine/gguf) and against
// the kernels' block structs (static_asserts in ggml_type.cpp).
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
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,  // activations only
  kIQ2_XXS = 16,
  kIQ2_XS = 17,
  kIQ3_XXS = 18,
  kIQ1_S = 19,
  kIQ4_NL = 20,
  kIQ3_S = 21,
  kIQ2_S = 22,
  kIQ4_XS = 23,
  kI8 = 24,
  kI16 = 25,
  kI32 = 26,
  kI64 = 27,
  kF64 = 28,
  kIQ1_M = 29,
  kBF16 = 30,
  kTQ1_0 = 34,
  kTQ2_0 = 35,
  kMXFP4 = 39,
  kNVFP4 = 40,
  kQ1_0 = 41,
};

// What a kernel does with a type: nothing (a file may hold it; loading a
// matrix of it is refused), take it as weights, or only produce it as the
// quantized form of activations (Q8_1, Q8_K).
enum class TypeUse : uint8_t { kNone, kWeights, kActivations };

struct TypeTraits {
  GgmlType type;
  const char* name;     // "Q4_K", as ggml spells it
  int64_t block_elems;  // elements per block (1 for plain types)
  size_t block_bytes;   // bytes per block
  TypeUse use;
};

// Traits of any type ggml defines (whether or not Hearth computes with it);
// nullptr for an id ggml does not define.
const TypeTraits* type_traits(GgmlType type);
const TypeTraits* type_traits_from_id(uint32_t id);

// True when the kernels take matrices of this type as weights.
bool is_weight_type(GgmlType type);

// Every type ggml defines, ordered by id (a range for range-for; the header
// stays C++17 for nvcc, hence no std::span).
struct TypeRange {
  const TypeTraits* first;
  const TypeTraits* last;
  const TypeTraits* begin() const { return first; }
  const TypeTraits* end() const { return last; }
};
TypeRange all_types();

// Bytes of a row of n elements. Precondition: the type is known and n is a
// multiple of its block_elems (engine/gguf's checked ggml_row_bytes is the
// entry for untrusted shapes).
size_t row_bytes(GgmlType type, int64_t n);

}  // namespace hearth::kernels
