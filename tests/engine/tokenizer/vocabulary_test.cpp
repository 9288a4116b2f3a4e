// Vocabulary::create rejects inconsistent data with errors naming the field.
#include "engine/tokenizer/vocabulary.h"

#include <gtest/gtest.h>

#include <functional>

#include "engine/tokenizer/special_split.h"
#include "tests/engine/tokenizer/tiny_vocab.h"

namespace hearth::tokenizer {
namespace {

struct Case {
  const char* name;
  std::function<void(VocabularyData&)> mutate;
  ErrorCode code;
  const char* message_part;
};

TEST(Vocabulary, RejectsInconsistentData) {
  const Case cases[] = {
      {"model", [](VocabularyData& d) { d.model = "wordpiece"; }, ErrorCode::kUnsupported, "wordpiece"},
      {"pre", [](VocabularyData& d) { d.pre = "mystery"; }, ErrorCode::kUnsupported, "mystery"},
      {"empty",
       [](VocabularyData& d) {
         d.tokens.clear();
         d.token_types.clear();
       },
       ErrorCode::kCorruptFile, "tokenizer.ggml.tokens"},
      {"scores", [](VocabularyData& d) { d.scores.assign(3, 0.0f); }, ErrorCode::kCorruptFile, "tokenizer.ggml.scores"},
      {"types length", [](VocabularyData& d) { d.token_types.pop_back(); }, ErrorCode::kCorruptFile,
       "tokenizer.ggml.token_type"},
      {"type value", [](VocabularyData& d) { d.token_types[7] = 9; }, ErrorCode::kCorruptFile, "token_type[7]"},
      {"bos", [](VocabularyData& d) { d.bos = 100000; }, ErrorCode::kCorruptFile, "bos_token_id"},
      {"eot", [](VocabularyData& d) { d.eot = -1; }, ErrorCode::kCorruptFile, "eot_token_id"},
      {"merge form", [](VocabularyData& d) { d.merges.push_back("nospace"); }, ErrorCode::kCorruptFile, "merges[1]"},
      {"merge result", [](VocabularyData& d) { d.merges.push_back("x y"); }, ErrorCode::kCorruptFile, "merges[1]"},
      // Issue 14: one 40 MB control token made the special-token trie take 5.4 GB.
      {"40 MB control token",
       [](VocabularyData& d) { testing::add_token(d, std::string(40u << 20, 'x'), TokenType::kControl); },
       ErrorCode::kCorruptFile, "tokens[257] is 41943040 bytes long"},
      {"special texts total",
       [](VocabularyData& d) {
         for (int i = 0; i < 20; ++i) {
           testing::add_token(d, std::to_string(i) + std::string(60u << 10, 's'), TokenType::kUserDefined);
         }
       },
       ErrorCode::kCorruptFile, "special tokens' texts total"},
  };
  for (const auto& c : cases) {
    VocabularyData d = testing::byte_level({"ab"}, {"a b"});
    c.mutate(d);
    auto v = Vocabulary::create(std::move(d));
    ASSERT_FALSE(v.ok()) << c.name;
    EXPECT_EQ(v.error().code, c.code) << c.name;
    EXPECT_NE(v.error().message.find(c.message_part), std::string::npos) << c.name << ": " << v.error().message;
  }
}

TEST(Vocabulary, AccessorsAndTypes) {
  VocabularyData d = testing::byte_level({"ab"}, {"a b"});
  const TokenId end = testing::add_token(d, "<end>", TokenType::kControl);
  d.eos = end;
  d.pre = "";  // missing: falls back to gpt2 with a warning
  auto v = testing::build(d);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->size(), 258u);
  EXPECT_EQ(v->kind(), ModelKind::kBpe);
  EXPECT_EQ(v->pre_name(), "gpt2");
  EXPECT_EQ(v->find("ab"), 256);
  EXPECT_EQ(v->find("zz"), std::nullopt);
  EXPECT_TRUE(v->is_control(end));
  EXPECT_TRUE(v->is_end_of_generation(end));
  EXPECT_FALSE(v->is_control(256));
  ASSERT_NE(v->find_merge('a', 'b'), nullptr);
  EXPECT_EQ(v->find_merge('a', 'b')->result, 256);
  EXPECT_EQ(v->find_merge('b', 'a'), nullptr);
  EXPECT_EQ(v->byte_token(' '), ' ');
  EXPECT_EQ(v->piece(' '), " ");
  ASSERT_EQ(v->special_tokens().size(), 1u);
}

}  // namespace
// Issue 14: a 40 MB control token once made the special-token trie take 5.4 GB.
// At the length caps (tokens of 64 KiB, special text of 1 MiB in all), random
// special texts (a trie node per byte) keep every structure a small multiple
// of the vocabulary's own bytes.
TEST(Vocabulary, StructuresStayASmallMultipleOfTheVocabularyAtTheCaps) {
  VocabularyData d = testing::byte_level({"ab"}, {"a b"});
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  std::size_t text_bytes = 0;
  for (std::size_t special = 0; special + Vocabulary::kMaxTokenBytes <= Vocabulary::kMaxSpecialBytes;
       special += Vocabulary::kMaxTokenBytes) {
    std::string text(Vocabulary::kMaxTokenBytes, '\0');
    for (char& c : text) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      c = static_cast<char>(0x21 + (state >> 56) % 94);  // printable ASCII: 94-way branching
    }
    testing::add_token(d, std::move(text), TokenType::kControl);
  }
  for (const std::string& t : d.tokens) text_bytes += t.size() + sizeof(std::uint64_t);  // GGUF: length + bytes
  auto v = testing::build(d);
  ASSERT_NE(v, nullptr);
  ASSERT_GE(v->special_tokens().size(), 15u);
  // About one trie node (21 bytes with its edge) per byte of special text.
  EXPECT_LE(v->special_matcher().heap_bytes(), 24 * Vocabulary::kMaxSpecialBytes);
  EXPECT_GE(v->special_matcher().heap_bytes(), 15 * Vocabulary::kMaxTokenBytes);  // it was measured
  EXPECT_LE(v->heap_bytes(), 32 * text_bytes);
  // Still a working matcher: each special text is found whole, and not a byte short.
  for (const TokenId id : v->special_tokens()) {
    const std::string& text = v->token_text(id);
    EXPECT_EQ(v->special_matcher().match(text, /*parse_special=*/true), id);
    EXPECT_EQ(v->special_matcher().match(std::string_view(text).substr(0, text.size() - 1), true), -1);
  }
}

// The trie built from sorted texts keeps the rules of the old one: the longest
// special text that prefixes the rest wins, and among equal texts the first
// in special_tokens() order; control tokens only when parse_special is set.
TEST(Vocabulary, SpecialMatcherPrefersTheLongestAndTheFirstOfEqualTexts) {
  VocabularyData d = testing::byte_level({}, {});
  const TokenId a = testing::add_token(d, "<|a|>", TokenType::kControl);
  const TokenId ab = testing::add_token(d, "<|a|>b", TokenType::kUserDefined);
  const TokenId a_again = testing::add_token(d, "<|a|>", TokenType::kUserDefined);
  const TokenId z = testing::add_token(d, "\xc3\xa9!", TokenType::kControl);  // bytes above 0x7f sort last
  auto v = testing::build(d);
  ASSERT_NE(v, nullptr);
  const SpecialMatcher& m = v->special_matcher();
  EXPECT_EQ(m.match("<|a|>bc", true), ab);
  EXPECT_EQ(m.match("<|a|>c", true), a);         // first of the equal texts (id order)
  EXPECT_EQ(m.match("<|a|>c", false), a_again);  // control tokens excluded
  EXPECT_EQ(m.match("<|a", true), -1);
  EXPECT_EQ(m.match("\xc3\xa9!x", true), z);
  EXPECT_EQ(m.match("\xc3\xa9!x", false), -1);
}

}  // namespace hearth::tokenizer
