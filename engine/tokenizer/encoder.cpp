#include "engine/tokenizer/encoder.h"

#include "engine/core/utf8.h"

namespace hearth::tokenizer {
namespace {

constexpr std::string_view kSpmSpace = "\xE2\x96\x81";  // U+2581

}  // namespace

Encoder::Encoder(std::shared_ptr<const Vocabulary> vocab) : vocab_(std::move(vocab)) {}
Encoder::~Encoder() = default;
Encoder::Encoder(Encoder&&) noexcept = default;
Encoder& Encoder::operator=(Encoder&&) noexcept = default;

Result<std::vector<TokenId>> Encoder::encode(std::string_view text, const EncodeOptions& options) {
  std::vector<TokenId> out;
  HEARTH_TRY(encode_into(text, options, out));
  return out;
}

Result<void> Encoder::encode_into(std::string_view text, const EncodeOptions& options, std::vector<TokenId>& out) {
  if (auto bad = find_invalid_utf8(text)) {
    return make_error(ErrorCode::kInvalidArgument,
                      "text to tokenize is not valid UTF-8 at byte " + std::to_string(*bad));
  }
  const Vocabulary& v = *vocab_;
  if (options.add_special && v.add_bos() && v.bos()) out.push_back(*v.bos());
  fragments_.clear();
  split_special(v, text, options.parse_special, fragments_);
  // SentencePiece: the space prefix goes before the first text and after
  // every special token (llama.cpp's convention for GGUF vocabularies).
  bool after_special = true;
  for (const Fragment& f : fragments_) {
    if (f.token >= 0) {
      out.push_back(f.token);
      after_special = true;
      continue;
    }
    if (v.kind() == ModelKind::kBpe) {
      HEARTH_TRY(encode_bpe(f.text, out));
    } else {
      HEARTH_TRY(encode_spm(f.text, after_special && v.add_space_prefix(), out));
    }
    after_special = false;
  }
  if (options.add_special && v.add_eos() && v.eos()) out.push_back(*v.eos());
  return {};
}

Result<void> Encoder::encode_bpe(std::string_view text, std::vector<TokenId>& out) {
  words_.clear();
  HEARTH_TRY(vocab_->pre_tokenizer()->split(text, regex_, words_));
  for (std::string_view word : words_) HEARTH_TRY(encode_bpe_word(word, out));
  return {};
}

Result<void> Encoder::encode_bpe_word(std::string_view word, std::vector<TokenId>& out) {
  if (word.size() > kCacheWordBytes) return bpe_merge_word(*vocab_, word, bpe_, out);
  if (auto it = cache_.find(word); it != cache_.end()) {
    out.insert(out.end(), it->second.begin(), it->second.end());
    return {};
  }
  const std::size_t first = out.size();
  HEARTH_TRY(bpe_merge_word(*vocab_, word, bpe_, out));
  if (cache_.size() >= kCacheEntries) cache_.clear();
  cache_.emplace(std::string(word), std::vector<TokenId>(out.begin() + static_cast<std::ptrdiff_t>(first), out.end()));
  return {};
}

Result<void> Encoder::encode_spm(std::string_view text, bool space_prefix, std::vector<TokenId>& out) {
  spm_text_.clear();
  if (space_prefix) spm_text_ += kSpmSpace;
  for (char c : text) {
    if (c == ' ') {
      spm_text_ += kSpmSpace;
    } else {
      spm_text_ += c;
    }
  }
  return spm_tokenize(*vocab_, spm_text_, spm_, out);
}

Result<std::vector<TokenId>> encode(std::shared_ptr<const Vocabulary> vocab, std::string_view text,
                                    const EncodeOptions& options) {
  Encoder encoder(std::move(vocab));
  return encoder.encode(text, options);
}

}  // namespace hearth::tokenizer
