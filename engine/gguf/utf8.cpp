#include "engine/gguf/utf8.h"

#include <cstdint>

namespace hearth::gguf {

std::string quote_for_message(std::string_view s) {
  constexpr std::size_t kMaxShown = 64;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  for (std::size_t i = 0; i < s.size() && i < kMaxShown; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F && c != '\'' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (s.size() > kMaxShown) out += "...";
  out += "'";
  return out;
}

}  // namespace hearth::gguf
