#include "engine/jinja/lexer.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "engine/jinja/pystr.h"

namespace hearth::jinja {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_name_char(char c) {
  return is_name_start(c) || is_digit(c);
}

// Skips Python-regex \s* (Unicode whitespace) from pos; returns the new position.
std::size_t skip_space(std::string_view s, std::size_t pos) {
  while (pos < s.size()) {
    const std::size_t next = s.find_first_not_of(" \t\n\r\f\v", pos);
    if (next != pos) {
      pos = next == std::string_view::npos ? s.size() : next;
      continue;
    }
    // Non-ASCII whitespace: decode one code point.
    std::size_t len = 1;
    const auto b = static_cast<unsigned char>(s[pos]);
    if (b >= 0xF0) {
      len = 4;
    } else if (b >= 0xE0) {
      len = 3;
    } else if (b >= 0xC0) {
      len = 2;
    }
    const std::u32string cp = pystr::decode(s.substr(pos, len));
    if (cp.size() != 1 || !pystr::is_space(cp[0])) break;
    pos += len;
  }
  return pos;
}

bool all_space(std::string_view s) {
  return !s.empty() && skip_space(s, 0) == s.size();
}

const char* const kOperators[] = {"//", "**", "==", "!=", "<=", ">=", "+", "-", "/", "*", "%", "~", "[",
                                  "]",  "(",  ")",  "{",  "}",  "<",  ">", "=", ".", ":", "|", ",", ";"};

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src), map_(src) {}

  Result<std::vector<Token>> run() {
    while (pos_ < src_.size()) {
      const std::size_t tag = find_tag(pos_);
      if (tag == std::string_view::npos) {
        emit_data(src_.substr(pos_), pos_);
        break;
      }
      HEARTH_TRY(root_tag(tag));
    }
    out_.push_back(Token{TokenType::kEnd, "", 0, 0.0, src_.size()});
    return std::move(out_);
  }

 private:
  Error fail(const std::string& what, std::size_t offset) const {
    return make_error(ErrorCode::kInvalidArgument, "chat template: " + what + " at " + map_.describe(offset));
  }

  std::size_t find_tag(std::size_t from) const {
    for (std::size_t p = src_.find('{', from); p != std::string_view::npos; p = src_.find('{', p + 1)) {
      if (p + 1 < src_.size() && (src_[p + 1] == '{' || src_[p + 1] == '%' || src_[p + 1] == '#')) return p;
    }
    return std::string_view::npos;
  }

  void emit_data(std::string_view text, std::size_t offset) {
    if (!text.empty()) out_.push_back(Token{TokenType::kData, std::string(text), 0, 0.0, offset});
  }

  // jinja2's OptionalLStrip: `-` strips all whitespace before the tag;
  // otherwise lstrip_blocks removes spaces between a line start and a block tag.
  std::string_view control(std::string_view text, char sign, bool is_variable) const {
    if (sign == '-') {
      std::size_t e = text.size();
      while (e > 0) {
        std::size_t b = e - 1;
        while (b > 0 && (static_cast<unsigned char>(text[b]) & 0xC0) == 0x80) --b;
        if (!all_space(text.substr(b, e - b))) break;
        e = b;
      }
      return text.substr(0, e);
    }
    if (sign == '+' || is_variable) return text;
    const std::size_t nl = text.rfind('\n');
    const std::size_t l_pos = nl == std::string_view::npos ? 0 : nl + 1;
    if ((l_pos > 0 || line_starting_) && all_space(text.substr(l_pos))) return text.substr(0, l_pos);
    return text;
  }

  // Matches `{%[-+]?\s*WORD\s*(-%}\s*|+%}|%}\n?)` at p; returns the end or npos.
  std::size_t match_word_tag(std::size_t p, std::string_view word, bool allow_plus_end, bool trim) const {
    std::size_t q = p + 2;
    if (q < src_.size() && (src_[q] == '-' || src_[q] == '+')) ++q;
    q = skip_space(src_, q);
    if (src_.substr(q, word.size()) != word) return std::string_view::npos;
    q = skip_space(src_, q + word.size());
    if (src_.substr(q, 3) == "-%}") return skip_space(src_, q + 3);
    if (allow_plus_end && src_.substr(q, 3) == "+%}") return q + 3;
    if (src_.substr(q, 2) == "%}") return q + 2 + (trim && q + 2 < src_.size() && src_[q + 2] == '\n' ? 1 : 0);
    return std::string_view::npos;
  }

  Result<void> root_tag(std::size_t tag) {
    const char kind = src_[tag + 1];
    const char sign = tag + 2 < src_.size() && (src_[tag + 2] == '-' || src_[tag + 2] == '+') ? src_[tag + 2] : '\0';
    emit_data(control(src_.substr(pos_, tag - pos_), sign, kind == '{'), pos_);
    if (kind == '%') {
      const std::size_t raw_end = match_word_tag(tag, "raw", false, false);
      if (raw_end != std::string_view::npos) {
        line_starting_ = src_[raw_end - 1] == '\n';
        return raw_body(raw_end, tag);
      }
    }
    if (kind == '#') return comment(tag + 2 + (sign ? 1 : 0), tag);
    const bool block = kind == '%';
    out_.push_back(Token{block ? TokenType::kBlockBegin : TokenType::kVarBegin, "", 0, 0.0, tag});
    pos_ = tag + 2 + (sign ? 1 : 0);
    return expression(block, tag);
  }

  Result<void> raw_body(std::size_t start, std::size_t tag) {
    for (std::size_t p = src_.find("{%", start); p != std::string_view::npos; p = src_.find("{%", p + 1)) {
      const std::size_t end = match_word_tag(p, "endraw", true, true);
      if (end == std::string_view::npos) continue;
      const char sign = src_[p + 2] == '-' || src_[p + 2] == '+' ? src_[p + 2] : '\0';
      emit_data(control(src_.substr(start, p - start), sign, false), start);
      pos_ = end;
      line_starting_ = src_[end - 1] == '\n';
      return {};
    }
    return fail("missing end of raw directive", tag);
  }

  Result<void> comment(std::size_t start, std::size_t tag) {
    const std::size_t close = src_.find("#}", start);
    if (close == std::string_view::npos) return fail("missing end of comment tag", tag);
    std::size_t end = close + 2;
    if (close > start && src_[close - 1] == '-') {
      end = skip_space(src_, end);
    } else if (close > start && src_[close - 1] == '+') {
    } else if (end < src_.size() && src_[end] == '\n') {
      ++end;
    }
    pos_ = end;
    line_starting_ = src_[end - 1] == '\n';
    return {};
  }

  // Returns true when the closing delimiter was consumed.
  bool try_end(bool block) {
    const std::string_view rest = src_.substr(pos_);
    const char* close = block ? "%}" : "}}";
    std::size_t end = std::string_view::npos;
    if (rest.size() >= 3 && rest[0] == '-' && rest.substr(1, 2) == close) {
      end = skip_space(src_, pos_ + 3);
    } else if (block && rest.size() >= 3 && rest[0] == '+' && rest.substr(1, 2) == close) {
      end = pos_ + 3;
    } else if (rest.substr(0, 2) == close) {
      end = pos_ + 2;
      if (block && end < src_.size() && src_[end] == '\n') ++end;
    }
    if (end == std::string_view::npos) return false;
    out_.push_back(Token{block ? TokenType::kBlockEnd : TokenType::kVarEnd, "", 0, 0.0, pos_});
    pos_ = end;
    line_starting_ = src_[end - 1] == '\n';
    return true;
  }

  Result<void> expression(bool block, std::size_t tag) {
    std::vector<char> balance;
    while (true) {
      if (pos_ >= src_.size()) return fail(block ? "unclosed block tag" : "unclosed variable tag", tag);
      if (balance.empty() && try_end(block)) return {};
      const char c = src_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
        pos_ = skip_space(src_, pos_);
        continue;
      }
      if (is_digit(c)) {
        HEARTH_TRY(number());
      } else if (is_name_start(c)) {
        const std::size_t b = pos_;
        while (pos_ < src_.size() && is_name_char(src_[pos_])) ++pos_;
        out_.push_back(Token{TokenType::kName, std::string(src_.substr(b, pos_ - b)), 0, 0.0, b});
      } else if (c == '\'' || c == '"') {
        HEARTH_TRY(string_literal());
      } else {
        HEARTH_TRY(operator_token(balance));
      }
    }
  }

  Result<void> operator_token(std::vector<char>& balance) {
    for (const char* op : kOperators) {
      const std::string_view o(op);
      if (src_.substr(pos_, o.size()) != o) continue;
      if (o == "(" || o == "[" || o == "{") balance.push_back(o == "(" ? ')' : o == "[" ? ']' : '}');
      if (o == ")" || o == "]" || o == "}") {
        if (balance.empty()) return fail("unexpected '" + std::string(o) + "'", pos_);
        if (balance.back() != o[0]) {
          return fail("unexpected '" + std::string(o) + "', expected '" + std::string(1, balance.back()) + "'", pos_);
        }
        balance.pop_back();
      }
      out_.push_back(Token{TokenType::kOp, std::string(o), 0, 0.0, pos_});
      pos_ += o.size();
      return {};
    }
    return fail("unexpected character '" + std::string(1, src_[pos_]) + "'", pos_);
  }

  // Digits with single underscores between them; returns the end.
  std::size_t digits(std::size_t p) const {
    if (p >= src_.size() || !is_digit(src_[p])) return std::string_view::npos;
    while (p < src_.size()) {
      if (is_digit(src_[p])) {
        ++p;
      } else if (src_[p] == '_' && p + 1 < src_.size() && is_digit(src_[p + 1])) {
        p += 2;
      } else {
        break;
      }
    }
    return p;
  }

  Result<void> number();
  Result<void> string_literal();

  std::string_view src_;
  SourceMap map_;
  std::vector<Token> out_;
  std::size_t pos_ = 0;
  bool line_starting_ = true;
};

std::string strip_underscores(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != '_') out.push_back(c);
  }
  return out;
}

Result<void> Lexer::number() {
  const std::size_t b = pos_;
  const std::size_t int_end = digits(b);
  // Floats: digits(.digits)?e[+-]digits, or digits.digits; not right after a '.'.
  std::size_t float_end = std::string_view::npos;
  if (b == 0 || src_[b - 1] != '.') {
    std::size_t p = int_end;
    if (p < src_.size() && src_[p] == '.' && digits(p + 1) != std::string_view::npos) {
      p = digits(p + 1);
      float_end = p;
    }
    if (p < src_.size() && (src_[p] == 'e' || src_[p] == 'E')) {
      std::size_t q = p + 1;
      if (q < src_.size() && (src_[q] == '+' || src_[q] == '-')) ++q;
      if (digits(q) != std::string_view::npos) float_end = digits(q);
    }
  }
  if (float_end != std::string_view::npos) {
    const std::string text = strip_underscores(src_.substr(b, float_end - b));
    out_.push_back(Token{TokenType::kFloat, text, 0, std::strtod(text.c_str(), nullptr), b});
    pos_ = float_end;
    return {};
  }
  int base = 10;
  std::size_t start = b;
  std::size_t end = int_end;
  if (src_[b] == '0' && b + 1 < src_.size() && std::string_view("bBoOxX").find(src_[b + 1]) != std::string_view::npos) {
    const char k = static_cast<char>(src_[b + 1] | 0x20);
    base = k == 'b' ? 2 : k == 'o' ? 8 : 16;
    start = end = b + 2;
    while (end < src_.size() && (std::isxdigit(static_cast<unsigned char>(src_[end])) || src_[end] == '_')) ++end;
  } else if (src_[b] == '0') {
    end = b + 1;  // "0(_?0)*": a decimal zero
    while (end < src_.size() &&
           (src_[end] == '0' || (src_[end] == '_' && end + 1 < src_.size() && src_[end + 1] == '0')))
      ++end;
  }
  const std::string text = strip_underscores(src_.substr(start, end - start));
  errno = 0;
  char* parsed_end = nullptr;
  const long long v = std::strtoll(text.c_str(), &parsed_end, base);
  if (text.empty() || errno != 0 || parsed_end != text.c_str() + text.size()) {
    return fail("integer literal out of range or malformed", b);
  }
  out_.push_back(Token{TokenType::kInt, text, static_cast<std::int64_t>(v), 0.0, b});
  pos_ = end;
  return {};
}

// Python-style escapes, as jinja2 decodes string literals ("unicode-escape").
Result<void> Lexer::string_literal() {
  const std::size_t b = pos_;
  const char quote = src_[pos_++];
  std::string value;
  while (true) {
    if (pos_ >= src_.size()) return fail("unterminated string literal", b);
    const char c = src_[pos_++];
    if (c == quote) break;
    if (c != '\\') {
      value.push_back(c);
      continue;
    }
    if (pos_ >= src_.size()) return fail("unterminated string literal", b);
    const char e = src_[pos_++];
    switch (e) {
      case '\n':
        break;
      case '\\':
      case '\'':
      case '"':
        value.push_back(e);
        break;
      case 'n':
        value.push_back('\n');
        break;
      case 't':
        value.push_back('\t');
        break;
      case 'r':
        value.push_back('\r');
        break;
      case 'a':
        value.push_back('\a');
        break;
      case 'b':
        value.push_back('\b');
        break;
      case 'f':
        value.push_back('\f');
        break;
      case 'v':
        value.push_back('\v');
        break;
      case 'x':
      case 'u':
      case 'U': {
        const std::size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        const std::string hex(src_.substr(pos_, n));
        if (hex.size() != n ||
            !std::all_of(hex.begin(), hex.end(), [](char h) { return std::isxdigit(static_cast<unsigned char>(h)); })) {
          return fail("malformed \\" + std::string(1, e) + " escape in string literal", pos_ - 2);
        }
        const auto cp = static_cast<char32_t>(std::strtoul(hex.c_str(), nullptr, 16));
        if (cp > 0x10FFFF) return fail("escape out of range in string literal", pos_ - 2);
        pystr::append_utf8(value, cp);
        pos_ += n;
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          std::size_t n = 1;
          char32_t cp = static_cast<char32_t>(e - '0');
          while (n < 3 && pos_ < src_.size() && src_[pos_] >= '0' && src_[pos_] <= '7') {
            cp = cp * 8 + static_cast<char32_t>(src_[pos_++] - '0');
            ++n;
          }
          pystr::append_utf8(value, cp);
        } else {
          value.push_back('\\');  // unknown escapes stay as written
          value.push_back(e);
        }
    }
  }
  out_.push_back(Token{TokenType::kString, std::move(value), 0, 0.0, b});
  return {};
}

}  // namespace

SourceMap::SourceMap(std::string_view source) {
  line_starts_.push_back(0);
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\n') line_starts_.push_back(i + 1);
  }
}

std::string SourceMap::describe(std::size_t offset) const {
  const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  const auto line = static_cast<std::size_t>(it - line_starts_.begin());
  const std::size_t col = offset - line_starts_[line - 1] + 1;
  return "line " + std::to_string(line) + ", column " + std::to_string(col);
}

std::string normalize_source(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out.push_back('\n');
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out.push_back(source[i]);
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

Result<std::vector<Token>> tokenize(std::string_view source) {
  return Lexer(source).run();
}

}  // namespace hearth::jinja
