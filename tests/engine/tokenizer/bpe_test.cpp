// Byte-level BPE on tiny vocabularies: byte b has id b, extra tokens 256...
#include <gtest/gtest.h>

#include <thread>

#include "engine/tokenizer/encoder.h"
#include "tests/engine/tokenizer/tiny_vocab.h"

namespace hearth::tokenizer {
namespace {

using testing::build;
using testing::byte_level;
using Ids = std::vector<TokenId>;

Ids encode_text(const std::shared_ptr<const Vocabulary>& v, std::string_view text) {
  auto ids = encode(v, text);
  EXPECT_TRUE(ids.ok()) << (ids.ok() ? "" : ids.error().describe());
  return ids.ok() ? *ids : Ids{};
}

Ids bytes_of(std::string_view s) {
  Ids ids;
  for (char c : s) ids.push_back(static_cast<unsigned char>(c));
  return ids;
}

TEST(Bpe, MergesByRank) {
  auto v = build(byte_level({"he", "ll", "hell", "hello", "\xC4\xA0w", "or", "\xC4\xA0wor", "ld"},
                            {"h e", "l l", "he ll", "hell o", "\xC4\xA0 w", "o r", "\xC4\xA0w or", "l d"}));
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(encode_text(v, "hello world"), (Ids{259, 262, 263}));
  EXPECT_EQ(encode_text(v, "hell"), (Ids{258}));
  EXPECT_EQ(encode_text(v, "help"), (Ids{256, 'l', 'p'}));
  EXPECT_EQ(encode_text(v, ""), Ids{});
}

TEST(Bpe, LowerRankWinsOverPosition) {
  struct Case {
    std::vector<std::string> merges;
    Ids expected;
  };
  const Case cases[] = {
      {{"a b", "b c"}, {256, 'c'}},  // "ab" (256) ranks first
      {{"b c", "a b"}, {'a', 257}},  // "bc" (257) ranks first
  };
  for (const auto& c : cases) {
    auto v = build(byte_level({"ab", "bc"}, c.merges));
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(encode_text(v, "abc"), c.expected);
  }
}

TEST(Bpe, EqualRanksMergeLeftmostFirst) {
  auto v = build(byte_level({"aa"}, {"a a"}));
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(encode_text(v, "aaa"), (Ids{256, 'a'}));
  EXPECT_EQ(encode_text(v, "aaaa"), (Ids{256, 256}));
  EXPECT_EQ(encode_text(v, "aaaaa"), (Ids{256, 256, 'a'}));
}

TEST(Bpe, NonAsciiBytesAndCacheReuse) {
  auto v = build(byte_level({}, {}));
  ASSERT_NE(v, nullptr);
  Encoder enc(v);
  for (int round = 0; round < 3; ++round) {  // later rounds hit the word cache
    auto ids = enc.encode("caf\xC3\xA9 \xF0\x9F\x98\x80!");
    ASSERT_TRUE(ids.ok());
    EXPECT_EQ(*ids, bytes_of("caf\xC3\xA9 \xF0\x9F\x98\x80!"));
  }
}

TEST(Bpe, WordsDoNotMergeAcrossPreTokenizerBoundaries) {
  auto v = build(byte_level({"a1"}, {"a 1"}, "smollm"));
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(encode_text(v, "a1"), (Ids{'a', '1'}));  // smollm isolates every digit
  auto g = build(byte_level({"a1"}, {"a 1"}, "gpt2"));
  EXPECT_EQ(encode_text(g, "a1"), (Ids{'a', '1'}));  // gpt2: letters and digits are separate words
}

TEST(Bpe, Llama3IgnoresMergesForWholeWordTokens) {
  EXPECT_EQ(encode_text(build(byte_level({"ab", "abc"}, {"a b"}, "llama3")), "abc"), (Ids{257}));
  EXPECT_EQ(encode_text(build(byte_level({"ab", "abc"}, {"a b"}, "gpt2")), "abc"), (Ids{256, 'c'}));
}

TEST(Bpe, InvalidUtf8IsAnError) {
  auto v = build(byte_level({}, {}));
  auto ids = encode(v, "ok\xE2\x82 then");
  ASSERT_FALSE(ids.ok());
  EXPECT_EQ(ids.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(ids.error().message.find("byte 2"), std::string::npos) << ids.error().message;
}

// As llama.cpp and HF: a byte the vocabulary has no token for is dropped,
// never replaced by the unknown token (SmolLM2's is <|endoftext|>).
TEST(Bpe, MissingByteTokenIsDropped) {
  VocabularyData d = byte_level({}, {"a b"});
  d.tokens['z'] = "<zz>";  // byte 'z' no longer has its token
  d.tokens.push_back("ab");
  d.token_types.push_back(static_cast<std::int32_t>(TokenType::kNormal));
  d.unk = 'q';
  auto v = build(d);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(encode_text(v, "zz"), (Ids{}));
  // "a", "b" become neighbours and merge, as in HF (SmolLM2's own tokenizer);
  // llama.cpp keeps the dropped byte as a barrier and gives {'a', 'b'}.
  EXPECT_EQ(encode_text(v, "azb"), (Ids{256}));
  EXPECT_EQ(encode_text(v, "za"), (Ids{'a'}));
}

}  // namespace
}  // namespace hearth::tokenizer

namespace hearth::tokenizer {
namespace {

TEST(Bpe, EncodersOnManyThreadsShareOneVocabulary) {
  auto v = testing::build(testing::byte_level({"he", "ll", "hell", "hello"}, {"h e", "l l", "he ll", "hell o"}));
  ASSERT_NE(v, nullptr);
  std::string text;
  for (int i = 0; i < 500; ++i) text += "hello hell he " + std::to_string(i) + "\n";
  const auto expected = encode(v, text).value();
  std::vector<std::vector<TokenId>> results(4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < results.size(); ++t) {
    threads.emplace_back([&, t] {
      Encoder enc(v);
      for (int round = 0; round < 5; ++round) results[t] = enc.encode(text).value();
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& r : results) EXPECT_EQ(r, expected);
}

}  // namespace
}  // namespace hearth::tokenizer
