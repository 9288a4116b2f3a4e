// Text to token ids. An Encoder is the per-thread half of the tokenizer: it
// shares an immutable Vocabulary and owns the mutable state of a call (regex
// match data, merge buffers, a cache of already tokenized BPE words). Use one
// Encoder per thread; many Encoders may share one Vocabulary.
//
// Input must be valid UTF-8: invalid input is a kInvalidArgument error naming
// the byte offset (no silent replacement: callers that want it can apply
// sanitize_utf8 from utf8.h first).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/tokenizer/bpe_merge.h"
#include "engine/tokenizer/pre_tokenizer.h"
#include "engine/tokenizer/special_split.h"
#include "engine/tokenizer/spm_merge.h"
#include "engine/tokenizer/vocabulary.h"
#include "hearth/result.h"

namespace hearth::tokenizer {

struct EncodeOptions {
  bool add_special = true;     // BOS / EOS as the vocabulary's add_bos / add_eos flags say
  bool parse_special = false;  // match control-token texts (e.g. "<|im_start|>") in the text
};

class Encoder {
 public:
  explicit Encoder(std::shared_ptr<const Vocabulary> vocab);
  ~Encoder();
  Encoder(Encoder&&) noexcept;
  Encoder& operator=(Encoder&&) noexcept;

  Result<std::vector<TokenId>> encode(std::string_view text, const EncodeOptions& options = {});
  // Appends to `out` (on error `out` may hold a partial result).
  Result<void> encode_into(std::string_view text, const EncodeOptions& options, std::vector<TokenId>& out);

  const Vocabulary& vocabulary() const { return *vocab_; }
  const std::shared_ptr<const Vocabulary>& shared_vocabulary() const { return vocab_; }

 private:
  // Words of up to this many bytes are cached; the cache is emptied when it
  // reaches kCacheEntries (cheap, and real text repeats its words quickly).
  static constexpr std::size_t kCacheWordBytes = 64;
  static constexpr std::size_t kCacheEntries = 1 << 16;

  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  Result<void> encode_bpe(std::string_view text, std::vector<TokenId>& out);
  Result<void> encode_bpe_word(std::string_view word, std::vector<TokenId>& out);
  Result<void> encode_spm(std::string_view text, bool space_prefix, std::vector<TokenId>& out);

  std::shared_ptr<const Vocabulary> vocab_;
  RegexScratch regex_;
  BpeScratch bpe_;
  SpmScratch spm_;
  std::vector<Fragment> fragments_;
  std::vector<std::string_view> words_;
  std::string spm_text_;
  std::unordered_map<std::string, std::vector<TokenId>, StringHash, std::equal_to<>> cache_;
};

// One-off encoding with a temporary Encoder (no cache reuse between calls).
Result<std::vector<TokenId>> encode(std::shared_ptr<const Vocabulary> vocab, std::string_view text,
                                    const EncodeOptions& options = {});

}  // namespace hearth::tokenizer
