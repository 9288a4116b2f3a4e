#include "engine/tokenizer/special_split.h"

namespace hearth::tokenizer {
namespace {

// The special token whose text starts at text[pos], longest first; -1 if none.
TokenId match_at(const Vocabulary& vocab, std::string_view text, std::size_t pos, bool parse_special) {
  const std::string_view rest = text.substr(pos);
  for (TokenId id : vocab.special_tokens()) {
    if (!parse_special && vocab.token_type(id) == TokenType::kControl) continue;
    if (rest.starts_with(vocab.token_text(id))) return id;
  }
  return -1;
}

}  // namespace

void split_special(const Vocabulary& vocab, std::string_view text, bool parse_special, std::vector<Fragment>& out) {
  std::size_t plain_start = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    if (!vocab.may_start_special(static_cast<unsigned char>(text[pos]))) {
      ++pos;
      continue;
    }
    const TokenId id = match_at(vocab, text, pos, parse_special);
    if (id < 0) {
      ++pos;
      continue;
    }
    if (pos > plain_start) out.push_back({text.substr(plain_start, pos - plain_start), -1});
    out.push_back({{}, id});
    pos += vocab.token_text(id).size();
    plain_start = pos;
  }
  if (pos > plain_start) out.push_back({text.substr(plain_start), -1});
}

}  // namespace hearth::tokenizer
