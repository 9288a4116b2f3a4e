// Turns a GGUF file into the engine's ModelBundle: the architecture's Model,
// the tokenizer vocabulary and the chat template. The one place that picks an
// architecture by name (the engine never does).
#pragma once

#include <filesystem>

#include "hearth/engine.h"
#include "hearth/result.h"

namespace hearth::models {

struct LoadOptions {
  int n_threads = 0;  // CPU threads for the forward pass; 0: every core
};

// kNotFound / kIo for the file, kCorruptFile for its contents, kUnsupported for
// an architecture or tensor type Hearth does not run.
Result<ModelBundle> load_model(const std::filesystem::path& path, const LoadOptions& options);

}  // namespace hearth::models
