#include "engine/jinja/pystr.h"

#include <algorithm>

#include "engine/core/utf8.h"

namespace hearth::jinja::pystr {
namespace {

// Length of a well-formed UTF-8 sequence starting at s[i], or 0 when malformed.
std::size_t sequence_length(std::string_view s, std::size_t i) {
  return valid_utf8_length(s, i);
}

bool in_set(char32_t cp, const std::u32string* chars) {
  if (chars == nullptr) return is_space(cp);
  return chars->find(cp) != std::u32string::npos;
}

char32_t to_upper(char32_t c) {
  if (c >= 'a' && c <= 'z') return c - 32;
  // Latin-1 and Latin Extended-A / Greek / Cyrillic basics, as Python maps them.
  if ((c >= 0xE0 && c <= 0xFE && c != 0xF7)) return c - 32;
  if (c == 0xFF) return 0x178;
  if (c >= 0x100 && c <= 0x17F && c != 0x130 && c != 0x131 && c != 0x138 && c != 0x149 && c != 0x17F) {
    const bool odd_upper = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E);
    if (odd_upper ? (c % 2 == 0) : (c % 2 == 1)) return c - 1;
    return c;
  }
  if (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) return c - 32;
  if (c >= 0x430 && c <= 0x44F) return c - 32;
  if (c >= 0x450 && c <= 0x45F) return c - 80;
  return c;
}

char32_t to_lower(char32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 32;
  if ((c >= 0xC0 && c <= 0xDE && c != 0xD7)) return c + 32;
  if (c == 0x178) return 0xFF;
  if (c >= 0x100 && c <= 0x17F && c != 0x130 && c != 0x131 && c != 0x138 && c != 0x149 && c != 0x17F) {
    const bool odd_upper = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E);
    if (odd_upper ? (c % 2 == 1) : (c % 2 == 0)) return c + 1;
    return c;
  }
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
  if (c >= 0x410 && c <= 0x42F) return c + 32;
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  return c;
}

bool is_line_break(char32_t c) {
  return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E || c == 0x85 ||
         c == 0x2028 || c == 0x2029;
}

}  // namespace

void append_utf8(std::string& out, char32_t cp) {
  if (cp >= 0xDC80 && cp <= 0xDCFF) {  // surrogateescape: a raw byte
    out.push_back(static_cast<char>(cp - 0xDC00));
  } else {
    ::hearth::append_utf8(out, cp);
  }
}

std::u32string decode(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t n = sequence_length(s, i);
    if (n == 0) {
      out.push_back(0xDC00 + static_cast<unsigned char>(s[i]));
      ++i;
      continue;
    }
    auto cp = static_cast<char32_t>(static_cast<unsigned char>(s[i]) & (n == 1 ? 0x7F : (0x7F >> n)));
    for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    out.push_back(cp);
    i += n;
  }
  return out;
}

std::string encode(std::u32string_view cps) {
  std::string out;
  out.reserve(cps.size());
  for (char32_t c : cps) append_utf8(out, c);
  return out;
}

std::size_t length(std::string_view s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++n) {
    const std::size_t len = sequence_length(s, i);
    i += len == 0 ? 1 : len;
  }
  return n;
}

bool is_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

std::string strip(std::string_view s, bool left, bool right, const std::u32string* chars) {
  const std::u32string cps = decode(s);
  std::size_t b = 0;
  std::size_t e = cps.size();
  if (left) {
    while (b < e && in_set(cps[b], chars)) ++b;
  }
  if (right) {
    while (e > b && in_set(cps[e - 1], chars)) --e;
  }
  return encode(std::u32string_view(cps).substr(b, e - b));
}

std::string upper(std::string_view s) {
  std::u32string out;
  for (char32_t c : decode(s)) {
    if (c == 0xDF) {  // Python upper-cases the sharp s to "SS"
      out += U"SS";
    } else {
      out.push_back(to_upper(c));
    }
  }
  return encode(out);
}

std::string lower(std::string_view s) {
  std::u32string cps = decode(s);
  for (auto& c : cps) c = to_lower(c);
  return encode(cps);
}

std::string capitalize(std::string_view s) {
  std::u32string cps = decode(s);
  for (std::size_t i = 0; i < cps.size(); ++i) cps[i] = i == 0 ? to_upper(cps[i]) : to_lower(cps[i]);
  return encode(cps);
}

// jinja2 splits on runs of [-\s({\[<] and capitalizes each piece.
std::string title_jinja(std::string_view s) {
  std::u32string cps = decode(s);
  bool word_start = true;
  for (auto& c : cps) {
    const bool sep = is_space(c) || c == '-' || c == '(' || c == '{' || c == '[' || c == '<';
    if (sep) {
      word_start = true;
      continue;
    }
    c = word_start ? to_upper(c) : to_lower(c);
    word_start = false;
  }
  return encode(cps);
}

std::vector<std::string> split(std::string_view s, const std::string* sep, long maxsplit) {
  std::vector<std::string> out;
  if (sep != nullptr) {
    std::size_t start = 0;
    while (maxsplit < 0 || static_cast<long>(out.size()) < maxsplit) {
      const std::size_t p = s.find(*sep, start);
      if (p == std::string_view::npos) break;
      out.emplace_back(s.substr(start, p - start));
      start = p + sep->size();
    }
    out.emplace_back(s.substr(start));
    return out;
  }
  const std::u32string cps = decode(s);
  std::size_t i = 0;
  while (i < cps.size()) {
    while (i < cps.size() && is_space(cps[i])) ++i;
    if (i == cps.size()) break;
    if (maxsplit >= 0 && static_cast<long>(out.size()) == maxsplit) {
      std::size_t e = cps.size();
      while (e > i && is_space(cps[e - 1])) --e;
      out.push_back(encode(std::u32string_view(cps).substr(i, e - i)));
      break;
    }
    std::size_t j = i;
    while (j < cps.size() && !is_space(cps[j])) ++j;
    out.push_back(encode(std::u32string_view(cps).substr(i, j - i)));
    i = j;
  }
  return out;
}

std::vector<std::string> rsplit(std::string_view s, const std::string* sep, long maxsplit) {
  if (maxsplit < 0) return split(s, sep, maxsplit);
  std::vector<std::string> out;
  if (sep != nullptr) {
    std::size_t end = s.size();
    while (static_cast<long>(out.size()) < maxsplit) {
      if (end < sep->size()) break;
      const std::size_t p = s.rfind(*sep, end - sep->size());
      if (p == std::string_view::npos) break;
      out.emplace_back(s.substr(p + sep->size(), end - p - sep->size()));
      end = p;
    }
    out.emplace_back(s.substr(0, end));
  } else {
    const std::u32string cps = decode(s);
    std::size_t e = cps.size();
    while (true) {
      while (e > 0 && is_space(cps[e - 1])) --e;
      if (e == 0) break;
      if (static_cast<long>(out.size()) == maxsplit) {
        std::size_t b = 0;
        while (b < e && is_space(cps[b])) ++b;
        out.push_back(encode(std::u32string_view(cps).substr(b, e - b)));
        break;
      }
      std::size_t b = e;
      while (b > 0 && !is_space(cps[b - 1])) --b;
      out.push_back(encode(std::u32string_view(cps).substr(b, e - b)));
      e = b;
    }
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<std::string> splitlines(std::string_view s, bool keepends) {
  const std::u32string cps = decode(s);
  std::vector<std::string> out;
  std::size_t start = 0;
  std::size_t i = 0;
  while (i < cps.size()) {
    if (!is_line_break(cps[i])) {
      ++i;
      continue;
    }
    std::size_t eol = i + 1;
    if (cps[i] == '\r' && eol < cps.size() && cps[eol] == '\n') ++eol;
    const std::size_t end = keepends ? eol : i;
    out.push_back(encode(std::u32string_view(cps).substr(start, end - start)));
    start = i = eol;
  }
  if (start < cps.size()) out.push_back(encode(std::u32string_view(cps).substr(start)));
  return out;
}

std::string replace(std::string_view s, std::string_view old_s, std::string_view new_s, long count_limit) {
  std::string out;
  long done = 0;
  if (old_s.empty()) {  // Python inserts `new` before every code point and at the end
    const std::u32string cps = decode(s);
    for (char32_t c : cps) {
      if (count_limit < 0 || done < count_limit) {
        out += new_s;
        ++done;
      }
      append_utf8(out, c);
    }
    if (count_limit < 0 || done < count_limit) out += new_s;
    return out;
  }
  std::size_t start = 0;
  while (count_limit < 0 || done < count_limit) {
    const std::size_t p = s.find(old_s, start);
    if (p == std::string_view::npos) break;
    out += s.substr(start, p - start);
    out += new_s;
    start = p + old_s.size();
    ++done;
  }
  out += s.substr(start);
  return out;
}

long count(std::string_view s, std::string_view sub) {
  if (sub.empty()) return static_cast<long>(length(s)) + 1;
  long n = 0;
  for (std::size_t p = s.find(sub); p != std::string_view::npos; p = s.find(sub, p + sub.size())) ++n;
  return n;
}

long find(std::string_view s, std::string_view sub, bool reverse) {
  const std::size_t p = reverse ? s.rfind(sub) : s.find(sub);
  if (p == std::string_view::npos) return -1;
  return static_cast<long>(length(s.substr(0, p)));
}

}  // namespace hearth::jinja::pystr
