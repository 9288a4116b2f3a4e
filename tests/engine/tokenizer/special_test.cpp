// Special tokens in text, BOS / EOS.
#include <gtest/gtest.h>

#include "engine/tokenizer/encoder.h"
#include "tests/engine/tokenizer/tiny_vocab.h"

namespace hearth::tokenizer {
namespace {

using testing::add_token;
using testing::build;
using testing::byte_level;
using Ids = std::vector<TokenId>;

constexpr TokenId kStart = 256, kEnd = 257, kTool = 258, kShort = 259;

VocabularyData chat_vocab() {
  VocabularyData d = byte_level({}, {});
  add_token(d, "<|im_start|>", TokenType::kControl);
  add_token(d, "<|im_end|>", TokenType::kControl);
  add_token(d, "<tool>", TokenType::kUserDefined);
  add_token(d, "<|im", TokenType::kControl);  // a prefix of the two above
  return d;
}

Ids bytes_of(std::string_view s) {
  Ids ids;
  for (char c : s) ids.push_back(static_cast<unsigned char>(c));
  return ids;
}

Ids concat(std::initializer_list<Ids> parts) {
  Ids out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

TEST(SpecialTokens, MatchedLeftmostLongestWhenParsing) {
  auto v = build(chat_vocab());
  ASSERT_NE(v, nullptr);
  EncodeOptions parse{.add_special = true, .parse_special = true};
  struct Case {
    std::string text;
    Ids expected;
  };
  const Case cases[] = {
      {"<|im_start|>hi<|im_end|>", {kStart, 'h', 'i', kEnd}},
      {"<|im_x", concat({{kShort}, bytes_of("_x")})},
      {"a<|im_start|><|im_start|>", {'a', kStart, kStart}},
      {"<<|im_end|>>", {'<', kEnd, '>'}},
      {"x<tool>y", {'x', kTool, 'y'}},
  };
  for (const auto& c : cases) EXPECT_EQ(encode(v, c.text, parse).value(), c.expected) << c.text;
}

TEST(SpecialTokens, ControlTextIsPlainWithoutParsing) {
  auto v = build(chat_vocab());
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(encode(v, "<|im_start|>hi").value(), bytes_of("<|im_start|>hi"));
  // User-defined tokens are matched either way.
  EXPECT_EQ(encode(v, "x<tool>y").value(), (Ids{'x', kTool, 'y'}));
}

TEST(SpecialTokens, BosAndEosFollowFlagsUnlessDisabled) {
  VocabularyData d = chat_vocab();
  d.bos = kStart;
  d.eos = kEnd;
  struct Case {
    bool add_bos, add_eos, add_special;
    Ids expected;
  };
  const Case cases[] = {
      {true, false, true, {kStart, 'o', 'k'}},
      {false, true, true, {'o', 'k', kEnd}},
      {true, true, true, {kStart, 'o', 'k', kEnd}},
      {true, true, false, {'o', 'k'}},
  };
  for (const auto& c : cases) {
    VocabularyData dd = d;
    dd.add_bos = c.add_bos;
    dd.add_eos = c.add_eos;
    auto v = build(dd);
    ASSERT_NE(v, nullptr);
    EncodeOptions o;
    o.add_special = c.add_special;
    EXPECT_EQ(encode(v, "ok", o).value(), c.expected);
  }
}

}  // namespace
}  // namespace hearth::tokenizer
