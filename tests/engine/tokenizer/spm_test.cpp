// SentencePiece-style vocabularies built in the test: 0 <unk>, 1 <s>, 2 </s>,
// 3..258 the byte tokens <0x00>..<0xFF> (byte b has id 3 + b), then pieces.
#include <gtest/gtest.h>

#include <cstdio>

#include "engine/tokenizer/decoder.h"
#include "engine/tokenizer/encoder.h"
#include "tests/engine/tokenizer/tiny_vocab.h"

namespace hearth::tokenizer {
namespace {

using Ids = std::vector<TokenId>;
const std::string kSp = "\xE2\x96\x81";  // ▁

struct Piece {
  std::string text;
  float score;
};

VocabularyData spm(const std::vector<Piece>& pieces, bool byte_fallback = true) {
  VocabularyData d;
  d.model = "llama";
  auto add = [&](std::string text, float score, TokenType type) {
    d.tokens.push_back(std::move(text));
    d.scores.push_back(score);
    d.token_types.push_back(static_cast<std::int32_t>(type));
  };
  add("<unk>", 0, TokenType::kUnknown);
  add("<s>", 0, TokenType::kControl);
  add("</s>", 0, TokenType::kControl);
  for (unsigned b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    add(name, 0, byte_fallback ? TokenType::kByte : TokenType::kUnused);
  }
  for (const auto& p : pieces) add(p.text, p.score, TokenType::kNormal);
  d.unk = 0;
  d.bos = 1;
  d.eos = 2;
  return d;
}

TokenId id_of(const Vocabulary& v, const std::string& text) {
  return v.find(text).value_or(-100);
}

// 259 ▁, 260 h, 261 e, 262 l, 263 o, 264 w, 265 r, 266 d, 267 ll, 268 he,
// 269 hell, 270 hello, 271 ▁hello
std::vector<Piece> hello_pieces() {
  return {{kSp, -10}, {"h", -10}, {"e", -10}, {"l", -10},   {"o", -10},    {"w", -10},         {"r", -10},
          {"d", -10}, {"ll", -1}, {"he", -2}, {"hell", -3}, {"hello", -5}, {kSp + "hello", -4}};
}

TEST(Spm, MergesHighestScoreFirst) {
  auto v = testing::build(spm(hello_pieces()));
  ASSERT_NE(v, nullptr);
  ASSERT_EQ(id_of(*v, kSp + "hello"), 271);
  const EncodeOptions plain{.add_special = false};
  EXPECT_EQ(encode(v, " hello", plain).value(), (Ids{271}));
  EXPECT_EQ(encode(v, "hell", plain).value(), (Ids{269}));
  EXPECT_EQ(encode(v, " hello world", plain).value(), (Ids{271, 259, 264, 263, 265, 262, 266}));
}

TEST(Spm, ScoresDecideBetweenOverlappingPairs) {
  struct Case {
    float ab, bc;
    Ids expected;
  };
  // 259 a, 260 b, 261 c, 262 ab, 263 bc
  const Case cases[] = {{-1, -2, {262, 261}}, {-2, -1, {259, 263}}, {-1, -1, {262, 261}}};  // tie: leftmost
  for (const auto& c : cases) {
    auto v = testing::build(spm({{"a", -9}, {"b", -9}, {"c", -9}, {"ab", c.ab}, {"bc", c.bc}}));
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(encode(v, "abc", {.add_special = false}).value(), c.expected);
  }
}

TEST(Spm, ByteFallbackAndUnknown) {
  auto v = testing::build(spm(hello_pieces()));
  // "é" is C3 A9; byte b is id 3 + b.
  EXPECT_EQ(encode(v, "h\xC3\xA9", {.add_special = false}).value(), (Ids{260, 3 + 0xC3, 3 + 0xA9}));
  auto no_bytes = testing::build(spm(hello_pieces(), false));
  EXPECT_EQ(encode(no_bytes, "h\xC3\xA9", {.add_special = false}).value(), (Ids{260, 0, 0}));
}

TEST(Spm, SpacePrefixBosAndDecode) {
  VocabularyData d = spm(hello_pieces());
  d.add_space_prefix = true;
  d.add_bos = true;
  auto v = testing::build(d);
  ASSERT_NE(v, nullptr);
  const Ids ids = encode(v, "hello world").value();
  EXPECT_EQ(ids, (Ids{1, 271, 259, 264, 263, 265, 262, 266}));
  EXPECT_EQ(decode(*v, ids).value(), "<s>hello world");
  EXPECT_EQ(decode(*v, ids, {.render_special = false}).value(), "hello world");
  EXPECT_EQ(decode(*v, ids, {.render_special = false, .strip_space_prefix = false}).value(), " hello world");
  // After a special token the prefix is added again (llama.cpp's convention).
  EXPECT_EQ(encode(v, "</s>hello", {.add_special = false, .parse_special = true}).value(), (Ids{2, 271}));
}

TEST(Spm, DecodesBytePiecesAndStreams) {
  auto v = testing::build(spm(hello_pieces()));
  const Ids ids = {271, 3 + 0xE4, 3 + 0xB8, 3 + 0x96};  // "▁hello" + 世 as bytes
  EXPECT_EQ(decode(*v, ids).value(), " hello\xE4\xB8\x96");
  StreamingDetokenizer s(v);
  EXPECT_EQ(s.push(ids[0]).value(), " hello");
  EXPECT_EQ(s.push(ids[1]).value(), "");
  EXPECT_EQ(s.push(ids[2]).value(), "");
  EXPECT_EQ(s.push(ids[3]).value(), "\xE4\xB8\x96");
}

TEST(Spm, ControlTokensAreNotMergeResults) {
  VocabularyData d = spm({{"<", -1}, {"s", -1}, {">", -1}, {"<s", -1}});
  auto v = testing::build(d);
  // "<s>" is the control token 1: as plain text it stays pieces.
  EXPECT_EQ(encode(v, "<s>", {.add_special = false}).value(), (Ids{262, 261}));
}

}  // namespace
}  // namespace hearth::tokenizer
