// Byte-level BPE pre-tokenizers: the sequence of regexes named by
// tokenizer.ggml.pre that cuts text into words before BPE. Each stage splits
// every piece of the previous stage into its matches and the gaps between them
// (both kept, in order), so the words always tile the text exactly. Regexes
// are PCRE2 (UTF + UCP, JIT); the compiled code is immutable and shared across
// threads, the match state lives in a RegexScratch owned by the caller.
//
// Known names (anything else is a kUnsupported error):
//   gpt2                         the GPT-2 pattern
//   smollm                       \p{N} (each digit alone), then the GPT-2 pattern
//   llama3, llama-bpe            the Llama 3 pattern (ignores merges for whole-word tokens)
//   qwen2, deepseek-r1-qwen      the Qwen 2 pattern (digits one by one)
// `\s` in the patterns means Unicode White_Space (U+0085 yes, U+180E no), as in
// the Oniguruma engine HF tokenizers uses.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hearth/result.h"

namespace hearth::tokenizer {

// Per-caller PCRE2 state (match data, JIT stack). Not thread-safe; cheap to keep.
class RegexScratch {
 public:
  RegexScratch();
  ~RegexScratch();
  RegexScratch(RegexScratch&&) noexcept;
  RegexScratch& operator=(RegexScratch&&) noexcept;

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

class PreTokenizer {
 public:
  static Result<std::unique_ptr<const PreTokenizer>> create(std::string_view name);
  ~PreTokenizer();

  const std::string& name() const { return name_; }
  // A word that is itself a token is emitted whole, without merging (Llama 3).
  bool ignore_merges() const { return ignore_merges_; }

  // Appends the words of `text` (views into it, tiling it) to `words`.
  // Precondition: `text` is valid UTF-8. Errors: a PCRE2 match failure.
  Result<void> split(std::string_view text, RegexScratch& scratch, std::vector<std::string_view>& words) const;

 private:
  struct Stage;
  PreTokenizer() = default;
  Result<void> split_stage(std::size_t stage, std::string_view piece, RegexScratch& scratch,
                           std::vector<std::string_view>& words) const;

  std::string name_;
  bool ignore_merges_ = false;
  std::vector<std::unique_ptr<Stage>> stages_;
};

}  // namespace hearth::tokenizer
