#include "engine/tokenizer/decoder.h"

#include <gtest/gtest.h>

#include "engine/tokenizer/encoder.h"
#include "tests/engine/tokenizer/tiny_vocab.h"

namespace hearth::tokenizer {
namespace {

using testing::add_token;
using testing::build;
using testing::byte_level;
using Ids = std::vector<TokenId>;

const std::string kFffd = "\xEF\xBF\xBD";

std::shared_ptr<const Vocabulary> vocab() {
  // 256 "he", 257 "ll", 258 "llo", 259 "Ġw", 260 "<|end|>", 261 "<tool>"
  VocabularyData d = byte_level({"he", "ll", "llo", "\xC4\xA0w"}, {"h e", "l l", "ll o", "\xC4\xA0 w"});
  add_token(d, "<|end|>", TokenType::kControl);
  add_token(d, "<tool>", TokenType::kUserDefined);
  return build(d);
}

TEST(Decode, PiecesAndSpecials) {
  auto v = vocab();
  ASSERT_NE(v, nullptr);
  ASSERT_EQ(v->token_text(258), "llo");
  const Ids ids = {256, 258, 259, 'o', 260, 261, '\n'};
  EXPECT_EQ(decode(*v, ids).value(), "hello wo<|end|><tool>\n");
  EXPECT_EQ(decode(*v, ids, {.render_special = false}).value(), "hello wo<tool>\n");
  EXPECT_EQ(token_to_piece(*v, 259).value(), " w");
  EXPECT_EQ(token_to_piece(*v, 260, {.render_special = false}).value(), "");
}

TEST(Decode, UnknownIdIsAnError) {
  auto v = vocab();
  for (TokenId bad : {-1, 262, 1 << 30}) {
    auto r = decode(*v, Ids{'a', bad});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(r.error().message.find(std::to_string(bad)), std::string::npos) << r.error().message;
  }
}

TEST(Decode, InvalidBytesAreReplacedUnlessRawBytesAreAsked) {
  auto v = vocab();
  const Ids half_emoji = {0xF0, 0x9F, 'x'};
  EXPECT_EQ(decode_bytes(*v, half_emoji).value(), "\xF0\x9Fx");
  EXPECT_EQ(decode(*v, half_emoji).value(), kFffd + "x");
}

TEST(Decode, RoundTripsEncode) {
  auto v = vocab();
  Encoder enc(v);
  for (std::string text :
       {"hello world", "  tabs\tand\nnewlines  ", "\xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9", "x<tool>y <|end|>"}) {
    auto ids = enc.encode(text);
    ASSERT_TRUE(ids.ok());
    EXPECT_EQ(decode(*v, *ids).value(), text);
  }
}

TEST(StreamingDetokenizer, HoldsBackPartialCharacters) {
  auto v = vocab();
  StreamingDetokenizer s(v);
  // U+1F600 is F0 9F 98 80; byte b has id b.
  EXPECT_EQ(s.push(0xF0).value(), "");
  EXPECT_EQ(s.push(0x9F).value(), "");
  EXPECT_EQ(s.pending_bytes(), 2u);
  EXPECT_EQ(s.push(0x98).value(), "");
  EXPECT_EQ(s.push(0x80).value(), "\xF0\x9F\x98\x80");
  EXPECT_EQ(s.push(256).value(), "he");
  EXPECT_EQ(s.push(0xC3).value(), "");
  EXPECT_EQ(s.push(0xA9).value(), "\xC3\xA9");
  EXPECT_EQ(s.flush(), "");
}

TEST(StreamingDetokenizer, NeverEmitsInvalidUtf8) {
  auto v = vocab();
  StreamingDetokenizer s(v);
  EXPECT_EQ(s.push(0x80).value(), kFffd);  // a stray continuation byte can never complete
  EXPECT_EQ(s.push(0xE2).value(), "");
  EXPECT_EQ(s.push('a').value(), kFffd + "a");
  EXPECT_EQ(s.push(0xE2).value(), "");
  EXPECT_EQ(s.push(0x82).value(), "");
  EXPECT_EQ(s.flush(), kFffd);  // truncated at the end
  EXPECT_EQ(s.pending_bytes(), 0u);
}

TEST(StreamingDetokenizer, UnknownIdLeavesStateUnchanged) {
  auto v = vocab();
  StreamingDetokenizer s(v);
  EXPECT_EQ(s.push(0xC3).value(), "");
  auto r = s.push(99999);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("99999"), std::string::npos);
  EXPECT_EQ(s.push(0xA9).value(), "\xC3\xA9");
}

TEST(StreamingDetokenizer, ConcatenationEqualsDecode) {
  auto v = vocab();
  Encoder enc(v);
  const std::string text = "h\xC3\xA9llo w\xE4\xB8\x96\xF0\x9F\x98\x80 <|end|> ok";
  auto ids = enc.encode(text, {.add_special = false, .parse_special = true});
  ASSERT_TRUE(ids.ok());
  for (bool render : {true, false}) {
    StreamingDetokenizer s(v, {.render_special = render});
    std::string streamed;
    for (TokenId id : *ids) streamed += s.push(id).value();
    streamed += s.flush();
    EXPECT_EQ(streamed, decode(*v, *ids, {.render_special = render}).value());
  }
}

}  // namespace
}  // namespace hearth::tokenizer
