#include "engine/core/utf8.h"

#include <gtest/gtest.h>

#include "engine/tokenizer/byte_unicode.h"

namespace hearth::tokenizer {
namespace {

TEST(Utf8, FindsFirstInvalidByte) {
  struct Case {
    std::string text;
    std::optional<std::size_t> bad;
  };
  const Case cases[] = {
      {"", std::nullopt},
      {"plain ascii", std::nullopt},
      {"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80", std::nullopt},  // é € 😀
      {"ab\x80", 2},                                                // stray continuation
      {"\xC0\xAF", 0},                                              // overlong '/'
      {"x\xE0\x80\xAF", 1},                                         // overlong 3-byte
      {"\xED\xA0\x80", 0},                                          // surrogate U+D800
      {"\xF4\x90\x80\x80", 0},                                      // above U+10FFFF
      {"ok\xE2\x82", 2},                                            // truncated at the end
      {"\xFF", 0},
      {std::string("a\0b", 3), std::nullopt},  // NUL is valid
  };
  for (const auto& c : cases) EXPECT_EQ(find_invalid_utf8(c.text), c.bad) << c.text;
}

TEST(Utf8, SanitizeReplacesMaximalSubparts) {
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(sanitize_utf8("a\x80z"), "a" + r + "z");
  EXPECT_EQ(sanitize_utf8("\xE2\x82z"), r + "z");       // one U+FFFD for a truncated sequence
  EXPECT_EQ(sanitize_utf8("\xF0\x9F\x98"), r);          // truncated at the end, final
  EXPECT_EQ(sanitize_utf8("\xC0\xAF"), r + r);          // C0 never starts a sequence
  EXPECT_EQ(sanitize_utf8("\xED\xA0\x80"), r + r + r);  // surrogate: each byte replaced
  EXPECT_EQ(sanitize_utf8("ok \xE2\x82\xAC"), "ok \xE2\x82\xAC");
}

TEST(Utf8, NonFinalKeepsIncompleteTail) {
  std::string out;
  EXPECT_EQ(append_sanitized_utf8(out, "ab\xF0\x9F", false), 2u);
  EXPECT_EQ(out, "ab");
}

TEST(Utf8, CodePointRoundTrip) {
  for (char32_t cp : {U'A', U'\u00e9', U'\u20ac', U'\U0001F600', U'\U0010FFFF'}) {
    std::string s;
    append_utf8(s, cp);
    std::size_t pos = 0;
    EXPECT_EQ(next_code_point(s, pos), cp);
    EXPECT_EQ(pos, s.size());
  }
}

TEST(ByteUnicode, Gpt2Mapping) {
  const auto& m = byte_to_unicode_utf8();
  EXPECT_EQ(m[' '], "\xC4\xA0");   // U+0120 Ġ
  EXPECT_EQ(m['\n'], "\xC4\x8A");  // U+010A Ċ
  EXPECT_EQ(m['A'], "A");
  EXPECT_EQ(m[0], "\xC4\x80");     // U+0100
  EXPECT_EQ(m[0xAD], "\xC5\x83");  // soft hyphen, the last shifted byte: U+0143
  for (unsigned b = 0; b < 256; ++b) {
    std::size_t pos = 0;
    const char32_t cp = next_code_point(m[b], pos);
    EXPECT_EQ(unicode_to_byte(cp), static_cast<unsigned char>(b));
  }
  EXPECT_EQ(unicode_to_byte(U'\u0144'), std::nullopt);
  EXPECT_EQ(unicode_to_byte(U'\u00AD'), std::nullopt);
}

}  // namespace
}  // namespace hearth::tokenizer
