// The GPT-2 byte-to-unicode mapping used by byte-level BPE vocabularies: each
// of the 256 byte values is shown as one printable code point, so that token
// strings never contain raw control bytes or spaces. Bytes that are printable
// Latin-1 ('!'..'~', U+00A1..U+00AC, U+00AE..U+00FF) map to themselves; the
// other 68 map, in increasing byte order, to U+0100, U+0101, ... (space 0x20
// becomes U+0120 'Ġ', newline 0x0A becomes U+010A 'Ċ').
#pragma once

#include <array>
#include <optional>
#include <string>

namespace hearth::tokenizer {

// The UTF-8 encoding of byte b's code point, for b in 0..255.
const std::array<std::string, 256>& byte_to_unicode_utf8();

// The byte a mapped code point stands for, or nullopt if `cp` is not one of
// the 256 mapped code points.
std::optional<unsigned char> unicode_to_byte(char32_t cp);

}  // namespace hearth::tokenizer
