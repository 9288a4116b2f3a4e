#include "engine/tokenizer/pre_tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <array>

namespace hearth::tokenizer {
namespace {

// Whitespace is spelled out as the Unicode White_Space property, which is what
// `\s` means to Oniguruma (HF tokenizers' regex engine). PCRE2's UCP `\s`
// differs: it lacks U+0085 and counts U+180E (a space before Unicode 6.3).
#define HEARTH_WS \
  "\\t\\n\\x{0B}\\f\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}"

// The GPT-2 pattern: contractions, letters, digits and other runs each with an
// optional leading space, whitespace not followed by a non-space, any whitespace.
constexpr const char* kGpt2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^" HEARTH_WS "\\p{L}\\p{N}]+|[" HEARTH_WS
                              "]+(?![^" HEARTH_WS "])|[" HEARTH_WS "]+";

constexpr const char* kDigit = "\\p{N}";

constexpr const char* kLlama3 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^" HEARTH_WS
    "\\p{L}\\p{N}]+[\\r\\n]*|[" HEARTH_WS "]*[\\r\\n]+|[" HEARTH_WS "]+(?![^" HEARTH_WS "])|[" HEARTH_WS "]+";

constexpr const char* kQwen2 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^" HEARTH_WS
    "\\p{L}\\p{N}]+[\\r\\n]*|[" HEARTH_WS "]*[\\r\\n]+|[" HEARTH_WS "]+(?![^" HEARTH_WS "])|[" HEARTH_WS "]+";

#undef HEARTH_WS

struct Definition {
  std::string_view name;
  std::vector<const char*> patterns;
  bool ignore_merges;
};

const std::vector<Definition>& definitions() {
  static const std::vector<Definition> defs = {
      // "gpt-2" is llama.cpp's name for the GPT-2 pattern (files it writes, and hearth-cli synth's).
      {"gpt2", {kGpt2}, false},
      {"gpt-2", {kGpt2}, false},
      {"smollm", {kDigit, kGpt2}, false},
      {"llama3", {kLlama3}, true},
      {"llama-bpe", {kLlama3}, true},
      {"qwen2", {kQwen2}, false},
      {"deepseek-r1-qwen", {kQwen2}, false},
  };
  return defs;
}

std::string known_names() {
  std::string s;
  for (const auto& d : definitions()) s += (s.empty() ? "" : ", ") + std::string(d.name);
  return s;
}

constexpr PCRE2_SIZE kJitStackStart = 32 * 1024;
constexpr PCRE2_SIZE kJitStackMax = 16 * 1024 * 1024;  // long whitespace runs backtrack deeply

}  // namespace

struct RegexScratch::Impl {
  pcre2_match_data* match = pcre2_match_data_create(4, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  pcre2_jit_stack* jit_stack = pcre2_jit_stack_create(kJitStackStart, kJitStackMax, nullptr);

  Impl() {
    if (context != nullptr && jit_stack != nullptr) pcre2_jit_stack_assign(context, nullptr, jit_stack);
  }
  ~Impl() {
    pcre2_jit_stack_free(jit_stack);
    pcre2_match_context_free(context);
    pcre2_match_data_free(match);
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
};

RegexScratch::RegexScratch() : impl_(std::make_unique<Impl>()) {}
RegexScratch::~RegexScratch() = default;
RegexScratch::RegexScratch(RegexScratch&&) noexcept = default;
RegexScratch& RegexScratch::operator=(RegexScratch&&) noexcept = default;

struct PreTokenizer::Stage {
  pcre2_code* code = nullptr;
  ~Stage() { pcre2_code_free(code); }
};

PreTokenizer::~PreTokenizer() = default;

Result<std::unique_ptr<const PreTokenizer>> PreTokenizer::create(std::string_view name) {
  const Definition* def = nullptr;
  for (const auto& d : definitions()) {
    if (d.name == name) def = &d;
  }
  if (def == nullptr) {
    return make_error(ErrorCode::kUnsupported, "tokenizer.ggml.pre '" + std::string(name) +
                                                   "' is not a known pre-tokenizer (known: " + known_names() + ")");
  }
  std::unique_ptr<PreTokenizer> pre(new PreTokenizer());
  pre->name_ = std::string(name);
  pre->ignore_merges_ = def->ignore_merges;
  for (const char* pattern : def->patterns) {
    int err = 0;
    PCRE2_SIZE err_offset = 0;
    auto stage = std::make_unique<Stage>();
    stage->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern), PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP,
                                &err, &err_offset, nullptr);
    if (stage->code == nullptr) {
      std::array<PCRE2_UCHAR, 256> msg{};
      pcre2_get_error_message(err, msg.data(), msg.size());
      return make_error(ErrorCode::kInternal, "pre-tokenizer '" + std::string(name) + "' regex does not compile at " +
                                                  std::to_string(err_offset) + ": " +
                                                  reinterpret_cast<const char*>(msg.data()));
    }
    // Without JIT pcre2_match interprets the pattern: slower, same results.
    pcre2_jit_compile(stage->code, PCRE2_JIT_COMPLETE);
    pre->stages_.push_back(std::move(stage));
  }
  return std::unique_ptr<const PreTokenizer>(std::move(pre));
}

Result<void> PreTokenizer::split(std::string_view text, RegexScratch& scratch,
                                 std::vector<std::string_view>& words) const {
  if (text.empty()) return {};
  return split_stage(0, text, scratch, words);
}

Result<void> PreTokenizer::split_stage(std::size_t stage, std::string_view piece, RegexScratch& scratch,
                                       std::vector<std::string_view>& words) const {
  if (stage == stages_.size()) {
    words.push_back(piece);
    return {};
  }
  auto& s = scratch.impl();
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(piece.data());
  std::size_t last = 0;  // end of the previous match
  std::size_t offset = 0;
  while (offset < piece.size()) {
    const int rc =
        pcre2_match(stages_[stage]->code, subject, piece.size(), offset, PCRE2_NO_UTF_CHECK, s.match, s.context);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      std::array<PCRE2_UCHAR, 256> msg{};
      pcre2_get_error_message(rc, msg.data(), msg.size());
      return make_error(ErrorCode::kInternal,
                        "pre-tokenizer '" + name_ + "' match failed: " + reinterpret_cast<const char*>(msg.data()));
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(s.match);
    const std::size_t begin = ov[0];
    const std::size_t end = ov[1];
    if (end == begin) {  // an empty match: step over one character (no pattern here matches empty)
      offset = end + 1;
      while (offset < piece.size() && (static_cast<unsigned char>(piece[offset]) & 0xC0) == 0x80) ++offset;
      continue;
    }
    if (begin > last) HEARTH_TRY(split_stage(stage + 1, piece.substr(last, begin - last), scratch, words));
    HEARTH_TRY(split_stage(stage + 1, piece.substr(begin, end - begin), scratch, words));
    last = end;
    offset = end;
  }
  if (last < piece.size()) HEARTH_TRY(split_stage(stage + 1, piece.substr(last), scratch, words));
  return {};
}

}  // namespace hearth::tokenizer
