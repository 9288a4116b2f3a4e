// The weights' format as a model file states it and its tensors confirm it:
// "Q4_1", "Q4_K_M", "F16"... It is what the app's model bar, the CLI's JSON
// and the generation records show, so it must not come from the file name.
#pragma once

#include <string>

#include "engine/gguf/gguf_file.h"

namespace hearth::models {

// The name of llama.cpp's general.file_type (0 "F32", 2 "Q4_0", 15 "Q4_K_M",
// ...) when the matrices (tensors of two or more dimensions) agree with it:
// most of their elements are of the type it names, or of the type llama.cpp
// falls back to where a row is not a multiple of 256 (Q4_K -> Q5_0, Q5_K ->
// Q5_1, Q6_K -> Q8_0). Otherwise, or without the key, the type most matrix
// elements have ("Q8_0"). "" for a file without matrices.
std::string weight_format_of(const gguf::GgufFile& file);

}  // namespace hearth::models
