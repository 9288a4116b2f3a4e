#include "engine/tokenizer/pre_tokenizer.h"

#include <gtest/gtest.h>

namespace hearth::tokenizer {
namespace {

std::vector<std::string> split(std::string_view name, std::string_view text) {
  auto pre = PreTokenizer::create(name);
  EXPECT_TRUE(pre.ok()) << (pre.ok() ? "" : pre.error().describe());
  if (!pre) return {};
  RegexScratch scratch;
  std::vector<std::string_view> words;
  auto r = (*pre)->split(text, scratch, words);
  EXPECT_TRUE(r.ok());
  return {words.begin(), words.end()};
}

using Words = std::vector<std::string>;

struct Case {
  const char* pre;
  std::string text;
  Words words;
};

// Expectations worked out by hand from the patterns' definitions.
const Case kCases[] = {
    {"gpt2", "Hello world", {"Hello", " world"}},
    {"gpt2", "I'm 42 years", {"I", "'m", " 42", " years"}},
    {"gpt2", "a  b", {"a", " ", " b"}},
    {"gpt2", "x\n\ny", {"x", "\n", "\n", "y"}},
    {"gpt2", "end  ", {"end", "  "}},
    {"gpt2", "don't!!", {"don", "'t", "!!"}},
    {"gpt2", "tab\tx", {"tab", "\t", "x"}},
    {"gpt2", "a\xC2\x85 b", {"a", "\xC2\x85", " b"}},          // U+0085 is whitespace
    {"gpt2", "a \xE1\xA0\x8Ey", {"a", " \xE1\xA0\x8E", "y"}},  // U+180E is not
    {"gpt2", "caf\xC3\xA9 \xE4\xBD\xA0\xE5\xA5\xBD", {"caf\xC3\xA9", " \xE4\xBD\xA0\xE5\xA5\xBD"}},
    {"gpt-2", "I'm 42 years", {"I", "'m", " 42", " years"}},  // llama.cpp's name for gpt2
    {"smollm", "abc123 def", {"abc", "1", "2", "3", " def"}},
    {"smollm", "x 42", {"x", " ", "4", "2"}},
    {"smollm", "\xC2\xBD\xC2\xB2", {"\xC2\xBD", "\xC2\xB2"}},  // ½ ² are \p{N}
    {"llama3", "12345", {"123", "45"}},
    {"llama3", "Hello WORLD's", {"Hello", " WORLD", "'s"}},
    {"llama3", "I'LL", {"I", "'LL"}},
    {"llama3", "a\n\nb", {"a", "\n\n", "b"}},
    {"llama3", "x;\n", {"x", ";\n"}},
    {"llama3", "(hello)", {"(hello", ")"}},
    {"llama-bpe", "  hi", {" ", " hi"}},
    {"qwen2", "12345", {"1", "2", "3", "4", "5"}},
    {"deepseek-r1-qwen", "  hi 7", {" ", " hi", " ", "7"}},
};

TEST(PreTokenizer, SplitsAsThePatternsSay) {
  for (const auto& c : kCases) EXPECT_EQ(split(c.pre, c.text), c.words) << c.pre << " on '" << c.text << "'";
}

TEST(PreTokenizer, WordsTileTheText) {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += (i % 7 == 0) ? "  \t\n" : "word42, ";
  text += std::string(10000, ' ') + "x";  // a long whitespace run backtracks deeply
  for (const char* name : {"gpt2", "smollm", "llama3", "qwen2"}) {
    std::string joined;
    for (const auto& w : split(name, text)) joined += w;
    EXPECT_EQ(joined, text) << name;
  }
}

TEST(PreTokenizer, UnknownNameIsAnError) {
  auto pre = PreTokenizer::create("no-such-pre");
  ASSERT_FALSE(pre.ok());
  EXPECT_EQ(pre.error().code, ErrorCode::kUnsupported);
  EXPECT_NE(pre.error().message.find("no-such-pre"), std::string::npos);
}

}  // namespace
}  // namespace hearth::tokenizer
