// The architectures Hearth runs, by GGUF name (general.architecture), and
// what can be learnt about a file before anything big is allocated: its
// hyper-parameters, and whether every tensor the architecture needs is
// present with the expected shape and a type the kernels compute.
#pragma once

#include <string>
#include <string_view>

#include "engine/gguf/gguf_file.h"
#include "engine/model/model.h"
#include "hearth/result.h"

namespace hearth::models {

// "llama, qwen2, gemma3": for messages.
const char* supported_architectures();
bool is_supported_architecture(std::string_view architecture);

// kUnsupported "model architecture 'X' is not supported (supported: ...)" for
// an unknown one; the file's errors otherwise.
Result<ModelHyperParams> read_hparams(const gguf::GgufFile& file);

// Binds (checks) every tensor of the file's architecture without uploading
// anything: kUnsupported naming the architecture or the tensor and its type,
// kCorruptFile naming a missing tensor or a wrong shape.
Result<void> check_weights(const gguf::GgufFile& file);

}  // namespace hearth::models
