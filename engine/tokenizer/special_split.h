// Cuts text at the special tokens it contains, before BPE / SentencePiece.
// Matching is leftmost-longest: scanning left to right, at each position the
// longest special token text that starts there wins. User-defined tokens are
// always matched (they are part of the vocabulary's surface, as HF added
// tokens are); control tokens only when `parse_special` is set, otherwise
// their texts are tokenized like any other text.
#pragma once

#include <string_view>
#include <vector>

#include "engine/tokenizer/vocabulary.h"

namespace hearth::tokenizer {

struct Fragment {
  std::string_view text;  // plain text to tokenize (empty when token >= 0)
  TokenId token = -1;     // a matched special token
};

// Appends the fragments of `text` in order; text fragments are never empty.
void split_special(const Vocabulary& vocab, std::string_view text, bool parse_special, std::vector<Fragment>& out);

}  // namespace hearth::tokenizer
