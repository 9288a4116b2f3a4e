// The immutable vocabulary of a model's tokenizer: token texts, scores and
// types, BPE merge ranks, special token ids and flags, the pre-tokenizer. Built
// once from a plain VocabularyData (filled by vocab_from_gguf.h or by a test),
// validated, then only read: one Vocabulary is shared by every thread through
// std::shared_ptr<const Vocabulary>. Per-call state lives in an Encoder.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hearth/result.h"

namespace hearth::tokenizer {

using TokenId = std::int32_t;

// GGUF tokenizer.ggml.token_type values (llama.cpp's): do not change or reuse.
enum class TokenType : std::int32_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,      // special: matched in text only when parsing specials
  kUserDefined = 4,  // added token: always matched in text, decoded verbatim
  kUnused = 5,
  kByte = 6,  // SentencePiece byte fallback "<0xXX>"
};

enum class ModelKind {
  kBpe,  // "gpt2": byte-level BPE with merge ranks and a regex pre-tokenizer
  kSpm,  // "llama": SentencePiece-style, score-ordered merges, U+2581 for spaces
};

// Everything a Vocabulary is built from; vectors are indexed by token id.
struct VocabularyData {
  std::string model;                      // "gpt2" or "llama"
  std::string pre;                        // BPE pre-tokenizer name; empty = "gpt2" (warns)
  std::vector<std::string> tokens;        // [n_vocab] token texts
  std::vector<float> scores;              // [n_vocab] or empty (all 0)
  std::vector<std::int32_t> token_types;  // [n_vocab] TokenType values, or empty (all normal)
  std::vector<std::string> merges;        // BPE: "left right"; rank = index (0 merges first)
  std::optional<TokenId> bos, eos, unk, pad, eot;
  bool add_bos = false;
  bool add_eos = false;
  bool add_space_prefix = false;  // SPM: prepend "▁" to text (after BOS / special tokens)
};

class PreTokenizer;
class SpecialMatcher;  // engine/tokenizer/special_split.h

class Vocabulary {
 public:
  struct Merge {
    std::int32_t rank;  // lower merges first
    TokenId result;
  };

  // Validates `data`: known model; scores / types of n_vocab entries (or
  // empty); type values 0..6; special ids in range; every merge "a b" names
  // tokens a, b and ab of the vocabulary; a known pre-tokenizer (BPE).
  // kCorruptFile / kUnsupported errors name the field and index.
  // Every token is at most kMaxTokenBytes long and the control / user-defined
  // texts (the special-token trie) total at most kMaxSpecialBytes.
  static Result<std::shared_ptr<const Vocabulary>> create(VocabularyData data);
  static constexpr std::size_t kMaxTokenBytes = 64u << 10;
  static constexpr std::size_t kMaxSpecialBytes = 1u << 20;

  ~Vocabulary();
  Vocabulary(const Vocabulary&) = delete;
  Vocabulary& operator=(const Vocabulary&) = delete;

  ModelKind kind() const { return kind_; }
  const std::string& model_name() const { return data_.model; }
  const std::string& pre_name() const { return pre_name_; }
  std::size_t size() const { return data_.tokens.size(); }
  bool contains(TokenId id) const { return id >= 0 && static_cast<std::size_t>(id) < size(); }

  // Preconditions for the accessors taking an id: contains(id).
  const std::string& token_text(TokenId id) const { return data_.tokens[index(id)]; }
  TokenType token_type(TokenId id) const { return types_[index(id)]; }
  float score(TokenId id) const { return data_.scores.empty() ? 0.0f : data_.scores[index(id)]; }
  // The bytes the token stands for in decoded text: byte-level or "▁"
  // unmapping applied; control / unknown / unused tokens: their text.
  const std::string& piece(TokenId id) const { return pieces_[index(id)]; }
  // Control, unknown and unused tokens: rendered only on request when decoding.
  bool is_control(TokenId id) const;
  // End of generation: EOS or EOT.
  bool is_end_of_generation(TokenId id) const { return id == data_.eos || id == data_.eot; }

  std::optional<TokenId> find(std::string_view text) const;
  std::optional<TokenId> bos() const { return data_.bos; }
  std::optional<TokenId> eos() const { return data_.eos; }
  std::optional<TokenId> unk() const { return data_.unk; }
  std::optional<TokenId> pad() const { return data_.pad; }
  std::optional<TokenId> eot() const { return data_.eot; }
  bool add_bos() const { return data_.add_bos; }
  bool add_eos() const { return data_.add_eos; }
  bool add_space_prefix() const { return data_.add_space_prefix; }

  // --- used by the encoder --------------------------------------------------
  // BPE: the merge of adjacent tokens (left, right), or nullptr.
  const Merge* find_merge(TokenId left, TokenId right) const;
  // BPE: the token of byte b's mapped character; SPM: the "<0xXX>" token.
  std::optional<TokenId> byte_token(unsigned char b) const;
  // Tokens matched in text before BPE/SPM (control and user-defined, non-empty
  // text), longest text first.
  std::span<const TokenId> special_tokens() const { return specials_; }
  // The index of special_tokens() by text, built with the vocabulary.
  const SpecialMatcher& special_matcher() const { return *special_matcher_; }
  // What the vocabulary's structures take on the heap (texts, decoded pieces,
  // indexes, merges, the special-token trie), approximately: with the length
  // caps above it stays a small multiple of the vocabulary's bytes in the file.
  std::size_t heap_bytes() const;
  const PreTokenizer* pre_tokenizer() const { return pre_.get(); }  // null for SPM

 private:
  Vocabulary() = default;
  static std::size_t index(TokenId id) { return static_cast<std::size_t>(id); }

  Result<void> init_types();
  Result<void> check_token_sizes() const;  // after init_types
  Result<void> init_merges();
  void init_byte_tokens();
  void init_pieces();
  void init_specials();

  VocabularyData data_;
  ModelKind kind_ = ModelKind::kBpe;
  std::string pre_name_;
  std::vector<TokenType> types_;                           // [n_vocab]
  std::vector<std::string> pieces_;                        // [n_vocab] decoded bytes
  std::unordered_map<std::string_view, TokenId> by_text_;  // views into data_.tokens
  std::unordered_map<std::uint64_t, Merge> merges_;        // key: left << 32 | right
  std::array<TokenId, 256> byte_tokens_{};                 // -1 when absent
  std::vector<TokenId> specials_;
  std::unique_ptr<const SpecialMatcher> special_matcher_;  // over specials_
  std::unique_ptr<const PreTokenizer> pre_;
};

}  // namespace hearth::tokenizer
