// Special tokens in text, BOS / EOS.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>

#include "engine/tokenizer/encoder.h"
#include "engine/tokenizer/special_split.h"
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

// The plain definition of leftmost-longest matching: at each position, scan
// every special token (longest text first) and take the first that matches.
std::vector<Fragment> reference_split(const Vocabulary& v, std::string_view text, bool parse_special) {
  std::vector<Fragment> out;
  std::size_t plain_start = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    TokenId hit = -1;
    for (TokenId id : v.special_tokens()) {
      if (!parse_special && v.token_type(id) == TokenType::kControl) continue;
      if (text.substr(pos).starts_with(v.token_text(id))) {
        hit = id;
        break;
      }
    }
    if (hit < 0) {
      ++pos;
      continue;
    }
    if (pos > plain_start) out.push_back({text.substr(plain_start, pos - plain_start), -1});
    out.push_back({{}, hit});
    pos += v.token_text(hit).size();
    plain_start = pos;
  }
  if (pos > plain_start) out.push_back({text.substr(plain_start), -1});
  return out;
}

using Pieces = std::vector<std::pair<std::string, TokenId>>;

Pieces as_pieces(const std::vector<Fragment>& fragments) {
  Pieces p;
  for (const Fragment& f : fragments) p.emplace_back(std::string(f.text), f.token);
  return p;
}

Pieces split(const Vocabulary& v, std::string_view text, bool parse_special) {
  std::vector<Fragment> out;
  split_special(v, text, parse_special, out);
  return as_pieces(out);
}

TEST(SpecialTokens, SameTextControlAndUserDefinedFollowParsing) {
  VocabularyData d = byte_level({}, {});
  const TokenId control = add_token(d, "<x>", TokenType::kControl);
  const TokenId user = add_token(d, "<x>", TokenType::kUserDefined);
  const TokenId longer = add_token(d, "<x>>", TokenType::kControl);
  auto v = build(d);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(split(*v, "a<x>>", true), (Pieces{{"a", -1}, {"", longer}}));
  EXPECT_EQ(split(*v, "a<x>>", false), (Pieces{{"a", -1}, {"", user}, {">", -1}}));
  EXPECT_EQ(split(*v, "<x><x", true), (Pieces{{"", control}, {"<x", -1}}));
  EXPECT_EQ(split(*v, "", true), Pieces{});
}

// Random special sets with shared prefixes (one text a prefix of another,
// duplicated texts, shared UTF-8 lead bytes) on random texts: the indexed
// matcher splits exactly as the linear scan does, parsing specials or not.
TEST(SpecialTokens, MatcherAgreesWithLinearScanOnRandomTexts) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const std::vector<std::string> atoms = {
      "<", ">", "|", "a", "b", "\xC3\xA9", "\xC3\xA3", "\xE2\x82\xAC", "\xE2\x82\x82", "\xF0\x9F\x98\x80", "\n", " "};
  auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  auto atoms_text = [&](std::size_t count) {
    std::string s;
    for (std::size_t i = 0; i < count; ++i) s += atoms[pick(atoms.size())];
    return s;
  };
  for (int round = 0; round < 200; ++round) {
    VocabularyData d = byte_level({}, {});
    std::vector<std::string> texts;
    const std::size_t n_specials = 1 + pick(40);
    for (std::size_t i = 0; i < n_specials; ++i) {
      std::string t;
      const std::size_t how = texts.empty() ? 0 : pick(4);
      if (how == 1) {
        t = texts[pick(texts.size())] + atoms_text(1 + pick(2));  // extends an existing text
      } else if (how == 2) {
        const std::string& base = texts[pick(texts.size())];  // a byte prefix of one (may cut a character)
        t = base.substr(0, 1 + pick(base.size()));
      } else if (how == 3) {
        t = texts[pick(texts.size())];  // a duplicate text
      } else {
        t = atoms_text(1 + pick(4));
      }
      texts.push_back(t);
      add_token(d, t, pick(2) == 0 ? TokenType::kControl : TokenType::kUserDefined);
    }
    auto v = build(d);
    ASSERT_NE(v, nullptr);
    for (int k = 0; k < 20; ++k) {
      std::string text;
      const std::size_t n_parts = pick(25);
      for (std::size_t i = 0; i < n_parts; ++i)
        text += pick(2) == 0 ? texts[pick(texts.size())] : atoms_text(1 + pick(3));
      for (bool parse : {true, false}) {
        ASSERT_EQ(split(*v, text, parse), as_pieces(reference_split(*v, text, parse)))
            << "text '" << text << "' parse_special " << parse;
      }
    }
  }
}

}  // namespace
}  // namespace hearth::tokenizer
