// SentencePiece-style tokenization (tokenizer.ggml.model = "llama"): the text,
// spaces already replaced by U+2581, starts as one symbol per code point;
// repeatedly the adjacent pair whose concatenation is a token with the highest
// score is merged (leftmost first on ties). Remaining symbols that are not
// tokens fall back to their bytes' "<0xXX>" tokens, else the unknown token.
// Control, unknown, unused and byte tokens are never the result of a merge
// (as in SentencePiece itself).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/tokenizer/vocabulary.h"
#include "hearth/result.h"

namespace hearth::tokenizer {

// Reusable buffers of spm_tokenize (not thread-safe).
struct SpmScratch {
  struct Symbol {
    std::int32_t prev;    // symbol index, -1 at the start
    std::int32_t next;    // symbol index, -1 at the end
    std::uint32_t start;  // byte offset in the text
    std::uint32_t len;    // bytes; 0 once merged into its left neighbour
  };
  struct Bigram {
    float score;
    std::int32_t left;
    std::int32_t right;
    std::uint32_t len;  // left.len + right.len when pushed: a change means stale
  };
  std::vector<Symbol> symbols;
  std::vector<Bigram> heap;
};

// Appends the tokens of `text` (valid UTF-8, spaces already U+2581) to `out`.
// Errors: a byte with neither a byte token nor an unknown token (kUnsupported);
// text longer than 4 GiB (kInvalidArgument).
Result<void> spm_tokenize(const Vocabulary& vocab, std::string_view text, SpmScratch& scratch,
                          std::vector<TokenId>& out);

}  // namespace hearth::tokenizer
