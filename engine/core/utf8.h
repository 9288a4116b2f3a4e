// The engine's one UTF-8 implementation: strict validation (the GGUF reader
// refuses invalid names and strings, the tokenizer's encoder invalid input),
// sanitizing with U+FFFD (the decoders never hand out invalid UTF-8 unless
// asked for raw bytes), and code point iteration (tokenizer, Jinja strings).
//
// "Valid" is RFC 3629: no overlong forms, no surrogates (U+D800..U+DFFF), no
// code points above U+10FFFF, no stray continuation bytes.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace hearth {

// Byte offset of the first invalid or truncated sequence, or nullopt when the
// whole of `text` is valid UTF-8.
std::optional<std::size_t> find_invalid_utf8(std::string_view text);

// Length in bytes (1..4) of the valid sequence at text[pos], or 0 when none
// starts there (invalid or truncated).
std::size_t valid_utf8_length(std::string_view text, std::size_t pos);

// Length in bytes (1..4) of the sequence starting with `lead`, or 0 when
// `lead` cannot start a sequence. Only the lead byte is looked at.
std::size_t utf8_sequence_length(unsigned char lead);

// Appends the UTF-8 encoding of `cp` (precondition: a valid scalar value).
void append_utf8(std::string& out, char32_t cp);

// Decodes the code point at `text[pos]` (precondition: valid UTF-8 there) and
// advances `pos` past it.
char32_t next_code_point(std::string_view text, std::size_t& pos);

// Appends `in` to `out` with every maximal invalid subpart replaced by U+FFFD
// (the Unicode "substitution of maximal subparts" practice, as Python's
// errors="replace" does). When `final` is false an incomplete sequence at the
// very end is not consumed. Returns the number of bytes of `in` consumed.
std::size_t append_sanitized_utf8(std::string& out, std::string_view in, bool final);

// `in` with invalid subparts replaced by U+FFFD.
std::string sanitize_utf8(std::string_view in);

}  // namespace hearth
