#include "models/architecture.h"

#include "models/gemma3/gemma3_weights.h"
#include "models/llama/llama_weights.h"

namespace hearth::models {
namespace {

Result<std::string_view> architecture_of(const gguf::GgufFile& file) {
  HEARTH_ASSIGN_OR_RETURN(std::string_view arch, file.get_string("general.architecture"));
  if (!is_supported_architecture(arch)) {
    return make_error(ErrorCode::kUnsupported, "model architecture '" + std::string(arch) +
                                                   "' is not supported (supported: " + supported_architectures() + ")");
  }
  return arch;
}

}  // namespace

const char* supported_architectures() {
  return "llama, qwen2, gemma3";
}

bool is_supported_architecture(std::string_view architecture) {
  return is_llama_family(architecture) || architecture == "gemma3";
}

Result<ModelHyperParams> read_hparams(const gguf::GgufFile& file) {
  HEARTH_ASSIGN_OR_RETURN(std::string_view arch, architecture_of(file));
  if (arch == "gemma3") {
    HEARTH_ASSIGN_OR_RETURN(Gemma3Params p, read_gemma3_params(file));
    return p.hp;
  }
  return read_llama_hparams(file);
}

Result<void> check_weights(const gguf::GgufFile& file) {
  HEARTH_ASSIGN_OR_RETURN(std::string_view arch, architecture_of(file));
  if (arch == "gemma3") {
    HEARTH_TRY(bind_gemma3_weights(file));
  } else {
    HEARTH_TRY(bind_llama_weights(file));
  }
  return {};
}

}  // namespace hearth::models
