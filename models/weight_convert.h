// Load-time weight conversion (`--quant TYPE`): every weight matrix of a GGUF
// re-quantized to another format the kernels run, before the model binds its
// tensors, so every architecture and backend gets it for free. Each row is
// dequantized to f32 and quantized to the target with the kernels' own row
// functions (round to nearest, one scale and min per block), on all cores.
//
// Only towards a coarser format: a matrix whose format stores fewer bits per
// weight than the target is refused with that reason (converting cannot
// restore what the coarser format lost); matrices already in the target type
// stay as they are. Vectors (norms, biases) are never converted.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "engine/gguf/gguf_file.h"
#include "hearth/result.h"

namespace hearth::models {

// The --quant spellings: F32, F16, BF16, Q8_0, Q6_K, Q5_1, Q5_0, Q5_K, Q4_1,
// Q4_0, Q4_K. kInvalidArgument names the ones it takes.
Result<gguf::GgmlType> parse_weight_quant(std::string_view name);

// Bits per weight of a type (block bytes * 8 / block elements): Q4_0 4.5, Q8_0 8.5, F16 16.
double bits_per_weight(gguf::GgmlType type);

struct ConversionPlan {
  std::size_t weights_bytes = 0;  // every tensor's bytes after the conversion
  int matrices = 0;               // matrices that change type
};
// Checks the conversion of `file` to `target` (finer formats and rows that are
// not whole blocks of the target refused, naming the tensor) without converting.
Result<ConversionPlan> plan_conversion(const gguf::GgufFile& file, gguf::GgmlType target);

struct ConversionReport {
  std::string from;  // the file's weight format before ("Q8_0", "F16", "Q4_K_M")
  std::string to;    // the target type's name
  int matrices = 0;
  double ms = 0;  // wall time of the conversion
};
// Converts `file`'s matrices in place (GgufFile::replace_tensor_data) on
// `threads` threads (0: every core).
Result<ConversionReport> convert_weights(gguf::GgufFile& file, gguf::GgmlType target, int threads);

}  // namespace hearth::models
