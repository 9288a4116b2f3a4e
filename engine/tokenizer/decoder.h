// Token ids to text. decode_bytes gives the exact bytes (which may be invalid
// UTF-8 when the ids split a character); decode gives display text with any
// invalid part replaced by U+FFFD. StreamingDetokenizer is for generation: it
// takes ids one at a time and hands out only complete, valid UTF-8, holding
// back the first bytes of a character until the rest arrives.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "engine/tokenizer/vocabulary.h"
#include "hearth/result.h"

namespace hearth::tokenizer {

struct DecodeOptions {
  // Control / unknown / unused tokens (BOS, "<|im_end|>", ...) appear as their
  // text; when false they produce nothing.
  bool render_special = true;
  // SentencePiece vocabularies with add_space_prefix: drop the one leading
  // space the encoder added (from the first token that is not control-like).
  bool strip_space_prefix = true;
};

// The bytes of token `id` in decoded text ("" for a skipped control token).
// kInvalidArgument when `id` is outside the vocabulary.
Result<std::string> token_to_piece(const Vocabulary& vocab, TokenId id, const DecodeOptions& options = {});

// Exact bytes of `ids`; kInvalidArgument naming the first unknown id.
Result<std::string> decode_bytes(const Vocabulary& vocab, std::span<const TokenId> ids,
                                 const DecodeOptions& options = {});

// decode_bytes with invalid UTF-8 replaced by U+FFFD (maximal subparts).
Result<std::string> decode(const Vocabulary& vocab, std::span<const TokenId> ids, const DecodeOptions& options = {});

class StreamingDetokenizer {
 public:
  explicit StreamingDetokenizer(std::shared_ptr<const Vocabulary> vocab, DecodeOptions options = {});

  // Appends token `id`; returns the text that became complete (often the
  // token's piece, possibly empty, possibly with held-back bytes of earlier
  // tokens). Bytes that can never form a valid character come out as U+FFFD.
  // kInvalidArgument for an unknown id (the state is unchanged).
  Result<std::string> push(TokenId id);
  // Ends the stream: returns what is held back, an incomplete character as U+FFFD.
  std::string flush();
  // Forgets held-back bytes and starts a new stream.
  void reset();

  // Bytes held back (a character's first 1..3 bytes).
  std::size_t pending_bytes() const { return pending_.size(); }

 private:
  std::shared_ptr<const Vocabulary> vocab_;
  DecodeOptions options_;
  std::string pending_;
  bool at_start_ = true;  // no non-control token seen yet (space prefix stripping)
};

}  // namespace hearth::tokenizer
