#include "engine/tokenizer/decoder.h"

#include "engine/core/utf8.h"

namespace hearth::tokenizer {
namespace {

Error unknown_id(const Vocabulary& vocab, TokenId id) {
  return make_error(ErrorCode::kInvalidArgument,
                    "token id " + std::to_string(id) + " is outside the vocabulary of " + std::to_string(vocab.size()));
}

bool strips_prefix(const Vocabulary& vocab, const DecodeOptions& options) {
  return options.strip_space_prefix && vocab.kind() == ModelKind::kSpm && vocab.add_space_prefix();
}

// Appends the piece of a valid `id`; `at_start` tracks space-prefix stripping.
void append_piece(const Vocabulary& vocab, TokenId id, const DecodeOptions& options, bool& at_start, std::string& out) {
  if (vocab.is_control(id)) {
    if (options.render_special) out += vocab.piece(id);
    return;
  }
  const std::string& piece = vocab.piece(id);
  if (at_start && strips_prefix(vocab, options) && !piece.empty() && piece[0] == ' ') {
    out.append(piece, 1);
  } else {
    out += piece;
  }
  at_start = false;
}

}  // namespace

Result<std::string> token_to_piece(const Vocabulary& vocab, TokenId id, const DecodeOptions& options) {
  if (!vocab.contains(id)) return unknown_id(vocab, id);
  if (vocab.is_control(id) && !options.render_special) return std::string();
  return vocab.piece(id);
}

Result<std::string> decode_bytes(const Vocabulary& vocab, std::span<const TokenId> ids, const DecodeOptions& options) {
  std::string out;
  bool at_start = true;
  for (TokenId id : ids) {
    if (!vocab.contains(id)) return unknown_id(vocab, id);
    append_piece(vocab, id, options, at_start, out);
  }
  return out;
}

Result<std::string> decode(const Vocabulary& vocab, std::span<const TokenId> ids, const DecodeOptions& options) {
  HEARTH_ASSIGN_OR_RETURN(std::string bytes, decode_bytes(vocab, ids, options));
  if (!find_invalid_utf8(bytes)) return bytes;
  return sanitize_utf8(bytes);
}

StreamingDetokenizer::StreamingDetokenizer(std::shared_ptr<const Vocabulary> vocab, DecodeOptions options)
    : vocab_(std::move(vocab)), options_(options) {}

Result<std::string> StreamingDetokenizer::push(TokenId id) {
  if (!vocab_->contains(id)) return unknown_id(*vocab_, id);
  append_piece(*vocab_, id, options_, at_start_, pending_);
  std::string out;
  const std::size_t used = append_sanitized_utf8(out, pending_, false);
  pending_.erase(0, used);
  return out;
}

std::string StreamingDetokenizer::flush() {
  std::string out;
  append_sanitized_utf8(out, pending_, true);
  pending_.clear();
  return out;
}

void StreamingDetokenizer::reset() {
  pending_.clear();
  at_start_ = true;
}

}  // namespace hearth::tokenizer
