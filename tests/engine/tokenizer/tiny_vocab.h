// Tiny vocabularies built in the tests, with ids that are easy to reason about.
#pragma once

#include <string>
#include <vector>

#include "engine/tokenizer/byte_unicode.h"
#include "engine/tokenizer/vocabulary.h"

namespace hearth::tokenizer::testing {

// Byte-level BPE: ids 0..255 are the 256 byte tokens (id == byte value), then
// `extra` tokens (ids 256...) and `merges`.
inline VocabularyData byte_level(std::vector<std::string> extra, std::vector<std::string> merges,
                                 std::string pre = "gpt2") {
  VocabularyData d;
  d.model = "gpt2";
  d.pre = std::move(pre);
  for (unsigned b = 0; b < 256; ++b) d.tokens.push_back(byte_to_unicode_utf8()[b]);
  for (auto& t : extra) d.tokens.push_back(std::move(t));
  d.token_types.assign(d.tokens.size(), static_cast<std::int32_t>(TokenType::kNormal));
  d.merges = std::move(merges);
  return d;
}

inline TokenId add_token(VocabularyData& d, std::string text, TokenType type) {
  d.tokens.push_back(std::move(text));
  d.token_types.push_back(static_cast<std::int32_t>(type));
  if (!d.scores.empty()) d.scores.push_back(0.0f);
  return static_cast<TokenId>(d.tokens.size() - 1);
}

inline std::shared_ptr<const Vocabulary> build(VocabularyData d) {
  auto v = Vocabulary::create(std::move(d));
  if (!v) return nullptr;
  return std::move(v).value();
}

}  // namespace hearth::tokenizer::testing
