#include "engine/core/utf8.h"

#include <cstdint>

namespace hearth {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

bool is_continuation(unsigned char b) {
  return (b & 0xC0) == 0x80;
}

// Allowed range of the second byte given the lead (excludes overlongs,
// surrogates and values above U+10FFFF); continuation bytes after it are 80..BF.
void second_byte_range(unsigned char lead, unsigned char& lo, unsigned char& hi) {
  lo = 0x80;
  hi = 0xBF;
  if (lead == 0xE0) lo = 0xA0;
  if (lead == 0xED) hi = 0x9F;
  if (lead == 0xF0) lo = 0x90;
  if (lead == 0xF4) hi = 0x8F;
}

enum class Scan { kValid, kInvalid, kTruncated };

// Examines the sequence at in[pos]. `len` receives the sequence length when
// valid, or the length of the maximal invalid subpart (>= 1) otherwise.
Scan scan_sequence(std::string_view in, std::size_t pos, std::size_t& len) {
  const auto lead = static_cast<unsigned char>(in[pos]);
  const std::size_t need = utf8_sequence_length(lead);
  if (need == 0) {
    len = 1;
    return Scan::kInvalid;
  }
  unsigned char lo = 0;
  unsigned char hi = 0;
  second_byte_range(lead, lo, hi);
  std::size_t i = 1;
  for (; i < need; ++i) {
    if (pos + i >= in.size()) {
      len = i;
      return Scan::kTruncated;
    }
    const auto b = static_cast<unsigned char>(in[pos + i]);
    const bool ok = (i == 1) ? (b >= lo && b <= hi) : is_continuation(b);
    if (!ok) {
      len = i;
      return Scan::kInvalid;
    }
  }
  len = need;
  return Scan::kValid;
}

}  // namespace

std::size_t utf8_sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;  // continuation byte, C0/C1 (always overlong) or F5..FF
}

std::size_t valid_utf8_length(std::string_view text, std::size_t pos) {
  std::size_t len = 0;
  return scan_sequence(text, pos, len) == Scan::kValid ? len : 0;
}

std::optional<std::size_t> find_invalid_utf8(std::string_view text) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    // Fast path for ASCII runs, which dominate most text.
    if (static_cast<unsigned char>(text[pos]) < 0x80) {
      ++pos;
      continue;
    }
    std::size_t len = 0;
    if (scan_sequence(text, pos, len) != Scan::kValid) return pos;
    pos += len;
  }
  return std::nullopt;
}

void append_utf8(std::string& out, char32_t cp) {
  const auto c = static_cast<std::uint32_t>(cp);
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

char32_t next_code_point(std::string_view text, std::size_t& pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  const std::size_t len = utf8_sequence_length(lead);
  std::uint32_t cp = len == 1 ? lead : (lead & (0x7Fu >> len));
  for (std::size_t i = 1; i < len; ++i) cp = (cp << 6) | (static_cast<unsigned char>(text[pos + i]) & 0x3Fu);
  pos += len == 0 ? 1 : len;
  return static_cast<char32_t>(cp);
}

std::size_t append_sanitized_utf8(std::string& out, std::string_view in, bool final) {
  std::size_t pos = 0;
  while (pos < in.size()) {
    std::size_t len = 0;
    const Scan s = static_cast<unsigned char>(in[pos]) < 0x80 ? (len = 1, Scan::kValid) : scan_sequence(in, pos, len);
    if (s == Scan::kValid) {
      out.append(in.substr(pos, len));
    } else if (s == Scan::kTruncated && !final) {
      return pos;  // may complete with the next bytes
    } else {
      out.append(kReplacement);
    }
    pos += len;
  }
  return pos;
}

std::string sanitize_utf8(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  append_sanitized_utf8(out, in, true);
  return out;
}

}  // namespace hearth
