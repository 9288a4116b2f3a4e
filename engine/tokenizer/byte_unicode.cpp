#include "engine/tokenizer/byte_unicode.h"

#include <cstdint>

#include "engine/core/utf8.h"

namespace hearth::tokenizer {
namespace {

constexpr unsigned kShifted = 68;  // bytes that do not map to themselves

bool maps_to_itself(unsigned b) {
  return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
}

struct Tables {
  std::array<char32_t, 256> cp{};
  std::array<std::string, 256> utf8;
  std::array<unsigned char, kShifted> shifted{};  // byte of U+0100 + n

  Tables() {
    unsigned n = 0;
    for (unsigned b = 0; b < 256; ++b) {
      if (maps_to_itself(b)) {
        cp[b] = static_cast<char32_t>(b);
      } else {
        shifted[n] = static_cast<unsigned char>(b);
        cp[b] = static_cast<char32_t>(0x100 + n++);
      }
      append_utf8(utf8[b], cp[b]);
    }
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

const std::array<std::string, 256>& byte_to_unicode_utf8() {
  return tables().utf8;
}

std::optional<unsigned char> unicode_to_byte(char32_t cp) {
  const auto c = static_cast<std::uint32_t>(cp);
  if (c < 0x100 && maps_to_itself(c)) return static_cast<unsigned char>(c);
  if (c >= 0x100 && c < 0x100 + kShifted) return tables().shifted[c - 0x100];
  return std::nullopt;
}

}  // namespace hearth::tokenizer
