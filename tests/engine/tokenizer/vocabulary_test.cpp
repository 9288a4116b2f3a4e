// Vocabulary::create rejects inconsistent data with errors naming the field.
#include "engine/tokenizer/vocabulary.h"

#include <gtest/gtest.h>

#include <functional>

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
}  // namespace hearth::tokenizer
