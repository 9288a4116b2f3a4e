#include "engine/tokenizer/vocabulary.h"

#include <algorithm>

#include "engine/core/log.h"
#include "engine/core/utf8.h"
#include "engine/tokenizer/byte_unicode.h"
#include "engine/tokenizer/pre_tokenizer.h"
#include "engine/tokenizer/special_split.h"

namespace hearth::tokenizer {
namespace {

constexpr std::string_view kSpmSpace = "\xE2\x96\x81";  // U+2581 LOWER ONE EIGHTH BLOCK

std::uint64_t merge_key(TokenId left, TokenId right) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) | static_cast<std::uint32_t>(right);
}

Result<void> check_special_id(const std::optional<TokenId>& id, const char* name, std::size_t n_vocab) {
  if (id && (*id < 0 || static_cast<std::size_t>(*id) >= n_vocab)) {
    return make_error(ErrorCode::kCorruptFile, std::string("tokenizer.ggml.") + name + " " + std::to_string(*id) +
                                                   " is outside the vocabulary of " + std::to_string(n_vocab));
  }
  return {};
}

// Byte-level text back to bytes; a character outside the byte map (not
// expected in a byte-level vocabulary) is kept as its own UTF-8.
std::string unmap_byte_level(std::string_view text) {
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t start = pos;
    const char32_t cp = next_code_point(text, pos);
    if (auto b = unicode_to_byte(cp)) {
      out.push_back(static_cast<char>(*b));
    } else {
      out.append(text.substr(start, pos - start));
    }
  }
  return out;
}

std::string unmap_spm_spaces(std::string_view text) {
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t hit = text.find(kSpmSpace, pos);
    out.append(text.substr(pos, hit == std::string_view::npos ? std::string_view::npos : hit - pos));
    if (hit == std::string_view::npos) break;
    out.push_back(' ');
    pos = hit + kSpmSpace.size();
  }
  return out;
}

// "<0x1F>" -> 0x1F; nullopt when `text` is not a byte-fallback token.
std::optional<unsigned char> parse_byte_token(std::string_view text) {
  if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return std::nullopt;
  unsigned value = 0;
  for (std::size_t i = 3; i < 5; ++i) {
    const char c = text[i];
    unsigned digit = 0;
    if (c >= '0' && c <= '9') {
      digit = static_cast<unsigned>(c - '0');
    } else if (c >= 'A' && c <= 'F') {
      digit = static_cast<unsigned>(c - 'A' + 10);
    } else if (c >= 'a' && c <= 'f') {
      digit = static_cast<unsigned>(c - 'a' + 10);
    } else {
      return std::nullopt;
    }
    value = value * 16 + digit;
  }
  return static_cast<unsigned char>(value);
}

}  // namespace

Vocabulary::~Vocabulary() = default;

Result<std::shared_ptr<const Vocabulary>> Vocabulary::create(VocabularyData data) {
  std::shared_ptr<Vocabulary> v(new Vocabulary());
  v->data_ = std::move(data);
  const VocabularyData& d = v->data_;
  const std::size_t n = d.tokens.size();
  if (d.model == "gpt2") {
    v->kind_ = ModelKind::kBpe;
  } else if (d.model == "llama") {
    v->kind_ = ModelKind::kSpm;
  } else {
    return make_error(ErrorCode::kUnsupported,
                      "tokenizer.ggml.model '" + d.model + "' is not supported (expected 'gpt2' or 'llama')");
  }
  if (n == 0) return make_error(ErrorCode::kCorruptFile, "tokenizer.ggml.tokens is empty");
  if (n > static_cast<std::size_t>(INT32_MAX)) {
    return make_error(ErrorCode::kCorruptFile, "tokenizer.ggml.tokens has too many entries");
  }
  if (!d.scores.empty() && d.scores.size() != n) {
    return make_error(ErrorCode::kCorruptFile, "tokenizer.ggml.scores has " + std::to_string(d.scores.size()) +
                                                   " entries, expected " + std::to_string(n));
  }
  HEARTH_TRY(check_special_id(d.bos, "bos_token_id", n));
  HEARTH_TRY(check_special_id(d.eos, "eos_token_id", n));
  HEARTH_TRY(check_special_id(d.unk, "unknown_token_id", n));
  HEARTH_TRY(check_special_id(d.pad, "padding_token_id", n));
  HEARTH_TRY(check_special_id(d.eot, "eot_token_id", n));
  HEARTH_TRY(v->init_types());
  HEARTH_TRY(v->check_token_sizes());

  std::size_t duplicates = 0;
  v->by_text_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    // The first of duplicate texts wins; later ones stay decodable.
    if (!v->by_text_.emplace(d.tokens[i], static_cast<TokenId>(i)).second) ++duplicates;
  }
  if (duplicates > 0) log::get("tokenizer")->warn("vocabulary has {} duplicate token texts", duplicates);

  if (v->kind_ == ModelKind::kBpe) {
    v->pre_name_ = d.pre.empty() ? "gpt2" : d.pre;
    if (d.pre.empty()) log::get("tokenizer")->warn("tokenizer.ggml.pre is missing: using the gpt2 pre-tokenizer");
    HEARTH_ASSIGN_OR_RETURN(v->pre_, PreTokenizer::create(v->pre_name_));
    HEARTH_TRY(v->init_merges());
  }
  v->init_byte_tokens();
  v->init_pieces();
  v->init_specials();
  return std::shared_ptr<const Vocabulary>(std::move(v));
}

// Real vocabularies' longest tokens are a few hundred bytes (runs of spaces or
// dashes) and their special texts sum to well under 100 KiB (Gemma's ~6,000
// "<unused..>" included). The bounds leave a wide margin while keeping the
// structures built from a hostile file (the special-token trie takes tens of
// bytes per byte of special text) small relative to any real model.
Result<void> Vocabulary::check_token_sizes() const {
  std::size_t special_bytes = 0;
  for (std::size_t i = 0; i < data_.tokens.size(); ++i) {
    const std::size_t len = data_.tokens[i].size();
    if (len > kMaxTokenBytes) {
      return make_error(ErrorCode::kCorruptFile, "tokenizer.ggml.tokens[" + std::to_string(i) + "] is " +
                                                     std::to_string(len) + " bytes long (at most " +
                                                     std::to_string(kMaxTokenBytes) + ")");
    }
    if (types_[i] == TokenType::kControl || types_[i] == TokenType::kUserDefined) special_bytes += len;
  }
  if (special_bytes > kMaxSpecialBytes) {
    return make_error(ErrorCode::kCorruptFile, "the special tokens' texts total " + std::to_string(special_bytes) +
                                                   " bytes (at most " + std::to_string(kMaxSpecialBytes) + ")");
  }
  return {};
}

Result<void> Vocabulary::init_types() {
  const std::size_t n = data_.tokens.size();
  if (!data_.token_types.empty() && data_.token_types.size() != n) {
    return make_error(ErrorCode::kCorruptFile, "tokenizer.ggml.token_type has " +
                                                   std::to_string(data_.token_types.size()) + " entries, expected " +
                                                   std::to_string(n));
  }
  types_.assign(n, TokenType::kNormal);
  for (std::size_t i = 0; i < data_.token_types.size(); ++i) {
    const std::int32_t t = data_.token_types[i];
    if (t < 0 || t > static_cast<std::int32_t>(TokenType::kByte)) {
      return make_error(ErrorCode::kCorruptFile,
                        "tokenizer.ggml.token_type[" + std::to_string(i) + "] = " + std::to_string(t) + " is unknown");
    }
    types_[i] = static_cast<TokenType>(t);
  }
  return {};
}

Result<void> Vocabulary::init_merges() {
  merges_.reserve(data_.merges.size());
  for (std::size_t i = 0; i < data_.merges.size(); ++i) {
    const std::string& m = data_.merges[i];
    const std::size_t space = m.find(' ', 1);
    auto bad = [&](const std::string& why) {
      return make_error(ErrorCode::kCorruptFile, "tokenizer.ggml.merges[" + std::to_string(i) + "] '" + m + "' " + why);
    };
    if (space == std::string::npos) return bad("is not two tokens separated by a space");
    const std::string_view left(m.data(), space);
    const std::string_view right = std::string_view(m).substr(space + 1);
    const auto l = find(left);
    const auto r = find(right);
    const auto merged = find(std::string(left) + std::string(right));
    if (!l || !r || !merged) return bad("names a token that is not in the vocabulary");
    // The first listing of a pair defines its rank.
    merges_.emplace(merge_key(*l, *r), Merge{static_cast<std::int32_t>(i), *merged});
  }
  return {};
}

void Vocabulary::init_byte_tokens() {
  byte_tokens_.fill(-1);
  if (kind_ == ModelKind::kBpe) {
    const auto& mapped = byte_to_unicode_utf8();
    for (unsigned b = 0; b < 256; ++b) {
      if (auto id = find(mapped[b])) byte_tokens_[b] = *id;
    }
    return;
  }
  for (std::size_t i = 0; i < size(); ++i) {
    if (types_[i] != TokenType::kByte) continue;
    if (auto b = parse_byte_token(data_.tokens[i]); b && byte_tokens_[*b] < 0) {
      byte_tokens_[*b] = static_cast<TokenId>(i);
    }
  }
}

void Vocabulary::init_pieces() {
  pieces_.resize(size());
  for (std::size_t i = 0; i < size(); ++i) {
    const std::string& text = data_.tokens[i];
    const TokenType t = types_[i];
    if (t == TokenType::kControl || t == TokenType::kUnknown || t == TokenType::kUnused ||
        t == TokenType::kUserDefined) {
      pieces_[i] = text;  // shown verbatim (control-like ones only on request)
    } else if (kind_ == ModelKind::kBpe) {
      pieces_[i] = unmap_byte_level(text);
    } else if (auto b = t == TokenType::kByte ? parse_byte_token(text) : std::nullopt) {
      pieces_[i] = std::string(1, static_cast<char>(*b));
    } else {
      pieces_[i] = unmap_spm_spaces(text);
    }
  }
}

void Vocabulary::init_specials() {
  for (std::size_t i = 0; i < size(); ++i) {
    const TokenType t = types_[i];
    if ((t == TokenType::kControl || t == TokenType::kUserDefined) && !data_.tokens[i].empty()) {
      specials_.push_back(static_cast<TokenId>(i));
    }
  }
  std::stable_sort(specials_.begin(), specials_.end(),
                   [&](TokenId a, TokenId b) { return data_.tokens[index(a)].size() > data_.tokens[index(b)].size(); });
  special_matcher_ = std::make_unique<const SpecialMatcher>(*this);
}

namespace {

std::size_t string_heap_bytes(const std::string& s) {
  return s.capacity() > 15 ? s.capacity() + 1 : 0;  // beyond the small-string buffer
}

}  // namespace

std::size_t Vocabulary::heap_bytes() const {
  // Hash nodes: the value, a next pointer and the cached hash; buckets: a pointer each.
  constexpr std::size_t kNodeOverhead = 2 * sizeof(void*);
  std::size_t bytes = 0;
  for (const std::vector<std::string>* texts : {&data_.tokens, &pieces_, &data_.merges}) {
    bytes += texts->capacity() * sizeof(std::string);
    for (const std::string& t : *texts) bytes += string_heap_bytes(t);
  }
  bytes += data_.scores.capacity() * sizeof(float) + data_.token_types.capacity() * sizeof(std::int32_t);
  bytes += types_.capacity() * sizeof(TokenType) + specials_.capacity() * sizeof(TokenId);
  bytes += by_text_.size() * (sizeof(std::pair<std::string_view, TokenId>) + kNodeOverhead) +
           by_text_.bucket_count() * sizeof(void*);
  bytes += merges_.size() * (sizeof(std::pair<std::uint64_t, Merge>) + kNodeOverhead) +
           merges_.bucket_count() * sizeof(void*);
  bytes += special_matcher_ ? special_matcher_->heap_bytes() : 0;
  return bytes;
}

bool Vocabulary::is_control(TokenId id) const {
  const TokenType t = token_type(id);
  return t == TokenType::kControl || t == TokenType::kUnknown || t == TokenType::kUnused;
}

std::optional<TokenId> Vocabulary::find(std::string_view text) const {
  const auto it = by_text_.find(text);
  if (it == by_text_.end()) return std::nullopt;
  return it->second;
}

const Vocabulary::Merge* Vocabulary::find_merge(TokenId left, TokenId right) const {
  const auto it = merges_.find(merge_key(left, right));
  return it == merges_.end() ? nullptr : &it->second;
}

std::optional<TokenId> Vocabulary::byte_token(unsigned char b) const {
  if (byte_tokens_[b] < 0) return std::nullopt;
  return byte_tokens_[b];
}

}  // namespace hearth::tokenizer
