#include "models/loader.h"

#include "engine/gguf/gguf_file.h"
#include "engine/model/model.h"
#include "engine/tokenizer/vocab_from_gguf.h"
#include "models/llama/llama_model.h"

namespace hearth::models {

Result<ModelBundle> load_model(const std::filesystem::path& path, const LoadOptions& options) {
  HEARTH_ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> file, gguf::GgufFile::open(path));
  ModelBundle bundle;
  HEARTH_ASSIGN_OR_RETURN(bundle.vocabulary, tokenizer::vocabulary_from_gguf(*file));
  if (auto tmpl = file->get_string("tokenizer.chat_template")) bundle.chat_template = std::string(*tmpl);
  // The path and size identify the weights for the prefix cache of one process;
  // callers that need a content identity hash the file (models/catalog.h).
  bundle.model_id = std::filesystem::absolute(path).string() + ":" + std::to_string(file->file_size());
  HEARTH_ASSIGN_OR_RETURN(std::string_view arch, file->get_string("general.architecture"));
  if (!is_llama_family(arch)) {
    return make_error(ErrorCode::kUnsupported,
                      "model architecture '" + std::string(arch) + "' is not supported (supported: llama, qwen2)");
  }
  HEARTH_ASSIGN_OR_RETURN(auto model, LlamaModel::load(std::move(file), LlamaOptions{options.n_threads}));
  bundle.model = std::move(model);
  return bundle;
}

}  // namespace hearth::models
