#include "engine/tokenizer/vocab_from_gguf.h"

#include <string>

namespace hearth::tokenizer {
namespace {

constexpr std::string_view kPrefix = "tokenizer.ggml.";

std::string key(std::string_view name) {
  return std::string(kPrefix) + std::string(name);
}

Result<std::optional<TokenId>> optional_id(const gguf::GgufFile& f, std::string_view name) {
  const std::string k = key(name);
  if (!f.has(k)) return std::optional<TokenId>();
  HEARTH_ASSIGN_OR_RETURN(const std::uint64_t v, f.get_uint(k));
  if (v > static_cast<std::uint64_t>(INT32_MAX)) {
    return make_error(ErrorCode::kCorruptFile, "key '" + k + "' = " + std::to_string(v) + " is not a valid token id");
  }
  return std::optional<TokenId>(static_cast<TokenId>(v));
}

Result<bool> optional_bool(const gguf::GgufFile& f, std::string_view name, bool fallback) {
  const std::string k = key(name);
  if (!f.has(k)) return fallback;
  return f.get<bool>(k);
}

Result<std::vector<std::string>> optional_strings(const gguf::GgufFile& f, std::string_view name) {
  const std::string k = key(name);
  if (!f.has(k)) return std::vector<std::string>();
  HEARTH_ASSIGN_OR_RETURN(const auto views, f.get_string_array(k));
  return std::vector<std::string>(views.begin(), views.end());
}

Error length_error(std::string_view name, std::size_t got, std::size_t want) {
  return make_error(ErrorCode::kCorruptFile, "key '" + key(name) + "' has " + std::to_string(got) +
                                                 " entries, expected " + std::to_string(want) +
                                                 " (the length of tokenizer.ggml.tokens)");
}

Result<void> read_arrays(const gguf::GgufFile& f, VocabularyData& d) {
  HEARTH_ASSIGN_OR_RETURN(const auto tokens, f.get_string_array(key("tokens")));
  d.tokens.assign(tokens.begin(), tokens.end());
  const std::size_t n = d.tokens.size();
  if (f.has(key("scores"))) {
    HEARTH_ASSIGN_OR_RETURN(const auto scores, f.get_numeric_array<float>(key("scores")));
    if (scores.size() != n) return length_error("scores", scores.size(), n);
    d.scores = scores.to_vector();
  }
  if (f.has(key("token_type"))) {
    HEARTH_ASSIGN_OR_RETURN(const auto types, f.get_numeric_array<std::int32_t>(key("token_type")));
    if (types.size() != n) return length_error("token_type", types.size(), n);
    d.token_types = types.to_vector();
  }
  HEARTH_ASSIGN_OR_RETURN(d.merges, optional_strings(f, "merges"));
  return {};
}

Result<void> read_ids(const gguf::GgufFile& f, VocabularyData& d) {
  HEARTH_ASSIGN_OR_RETURN(d.bos, optional_id(f, "bos_token_id"));
  HEARTH_ASSIGN_OR_RETURN(d.eos, optional_id(f, "eos_token_id"));
  HEARTH_ASSIGN_OR_RETURN(d.unk, optional_id(f, "unknown_token_id"));
  HEARTH_ASSIGN_OR_RETURN(d.pad, optional_id(f, "padding_token_id"));
  HEARTH_ASSIGN_OR_RETURN(d.eot, optional_id(f, "eot_token_id"));
  const std::pair<const char*, const std::optional<TokenId>*> ids[] = {
      {"bos_token_id", &d.bos},     {"eos_token_id", &d.eos}, {"unknown_token_id", &d.unk},
      {"padding_token_id", &d.pad}, {"eot_token_id", &d.eot},
  };
  for (const auto& [name, id] : ids) {
    if (*id && static_cast<std::size_t>(**id) >= d.tokens.size()) {
      return make_error(ErrorCode::kCorruptFile, "key '" + key(name) + "' = " + std::to_string(**id) +
                                                     " is outside the vocabulary of " +
                                                     std::to_string(d.tokens.size()) + " tokens");
    }
  }
  return {};
}

}  // namespace

Result<VocabularyData> vocabulary_data_from_gguf(const gguf::GgufFile& f) {
  VocabularyData d;
  HEARTH_ASSIGN_OR_RETURN(const std::string_view model, f.get_string(key("model")));
  d.model = std::string(model);
  if (f.has(key("pre"))) {
    HEARTH_ASSIGN_OR_RETURN(const std::string_view pre, f.get_string(key("pre")));
    d.pre = std::string(pre);
  }
  HEARTH_TRY(read_arrays(f, d));
  HEARTH_TRY(read_ids(f, d));
  // Defaults when the flags are absent follow the model family's convention:
  // SentencePiece vocabularies add BOS and a space prefix, byte-level BPE neither.
  const bool spm = d.model == "llama";
  HEARTH_ASSIGN_OR_RETURN(d.add_bos, optional_bool(f, "add_bos_token", spm));
  HEARTH_ASSIGN_OR_RETURN(d.add_eos, optional_bool(f, "add_eos_token", false));
  HEARTH_ASSIGN_OR_RETURN(d.add_space_prefix, optional_bool(f, "add_space_prefix", spm));
  return d;
}

Result<std::shared_ptr<const Vocabulary>> vocabulary_from_gguf(const gguf::GgufFile& file) {
  HEARTH_ASSIGN_OR_RETURN(VocabularyData data, vocabulary_data_from_gguf(file));
  return Vocabulary::create(std::move(data));
}

}  // namespace hearth::tokenizer
