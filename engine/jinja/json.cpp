#include "engine/jinja/json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "engine/jinja/pystr.h"

namespace hearth::jinja {
namespace {

constexpr int kMaxJsonDepth = 256;

void escape_non_ascii(std::string& out, const std::string& s) {
  for (char32_t cp : pystr::decode(s)) {
    char buf[16];
    if (cp >= 0x10000) {
      const char32_t v = cp - 0x10000;
      std::snprintf(buf, sizeof(buf), "\\u%04x\\u%04x", static_cast<unsigned>(0xD800 + (v >> 10)),
                    static_cast<unsigned>(0xDC00 + (v & 0x3FF)));
    } else {
      std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(cp));
    }
    out += buf;
  }
}

void dump_string(std::string& out, const std::string& s, bool ensure_ascii) {
  out.push_back('"');
  std::string pending;  // a run of non-ASCII bytes, escaped as code points
  for (char ch : s) {
    if (ensure_ascii && (static_cast<unsigned char>(ch) >= 0x7F)) {
      pending.push_back(ch);
      continue;
    }
    if (!pending.empty()) {
      escape_non_ascii(out, pending);
      pending.clear();
    }
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(ch);
        }
    }
  }
  if (!pending.empty()) escape_non_ascii(out, pending);
  out.push_back('"');
}

std::string dump_float(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d < 0 ? "-Infinity" : "Infinity";
  return python_float_repr(d);
}

Result<std::string> key_text(const Value& k) {
  if (k.is_string()) return k.as_string();
  if (k.is_bool()) return std::string(k.as_bool() ? "true" : "false");
  if (k.is_none()) return std::string("null");
  if (k.is_int()) return std::to_string(k.as_int());
  if (k.is_float()) return dump_float(k.as_double());
  return make_error(ErrorCode::kInvalidArgument,
                    std::string("tojson: keys must be str, int, float, bool or None, not ") + k.type_name());
}

struct Dumper {
  const JsonDumpOptions& opt;
  std::string out;

  void newline(int level) {
    out.push_back('\n');
    for (int i = 0; i < level; ++i) out += *opt.indent;
  }

  Result<void> dump(const Value& v, int level) {
    if (level > kMaxJsonDepth) return make_error(ErrorCode::kInvalidArgument, "tojson: nesting too deep");
    // Checked per value: the text can outgrow its input by the indent and separators per item.
    if (out.size() > kMaxValueBytes) {
      return make_error(ErrorCode::kOutOfMemory,
                        "chat template: tojson output would exceed " + std::to_string(kMaxValueBytes) + " bytes");
    }
    switch (v.kind()) {
      case Value::Kind::kNone:
        out += "null";
        return {};
      case Value::Kind::kBool:
        out += v.as_bool() ? "true" : "false";
        return {};
      case Value::Kind::kInt:
        out += std::to_string(v.as_int());
        return {};
      case Value::Kind::kFloat:
        out += dump_float(v.as_double());
        return {};
      case Value::Kind::kString:
        dump_string(out, v.as_string(), opt.ensure_ascii);
        return {};
      case Value::Kind::kList:
        return dump_list(v, level);
      case Value::Kind::kDict:
        if (v.is_dict()) return dump_dict(v, level);
        break;
      default:
        break;
    }
    return make_error(ErrorCode::kInvalidArgument,
                      std::string("tojson: Object of type ") + v.type_name() + " is not JSON serializable");
  }

  Result<void> dump_list(const Value& v, int level) {
    if (v.items().empty()) {
      out += "[]";
      return {};
    }
    out.push_back('[');
    bool first = true;
    for (const auto& item : v.items()) {
      if (!first) out += opt.item_separator;
      first = false;
      if (opt.indent) newline(level + 1);
      HEARTH_TRY(dump(item, level + 1));
    }
    if (opt.indent) newline(level);
    out.push_back(']');
    return {};
  }

  Result<void> dump_dict(const Value& v, int level) {
    std::vector<std::pair<std::string, const Value*>> entries;
    for (const auto& [k, val] : v.dict_value().entries) {
      HEARTH_ASSIGN_OR_RETURN(std::string key, key_text(k));
      entries.emplace_back(std::move(key), &val);
    }
    if (entries.empty()) {
      out += "{}";
      return {};
    }
    if (opt.sort_keys) {
      std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    out.push_back('{');
    bool first = true;
    for (const auto& [key, val] : entries) {
      if (!first) out += opt.item_separator;
      first = false;
      if (opt.indent) newline(level + 1);
      dump_string(out, key, opt.ensure_ascii);
      out += opt.key_separator;
      HEARTH_TRY(dump(*val, level + 1));
    }
    if (opt.indent) newline(level);
    out.push_back('}');
    return {};
  }
};

// A recursive-descent reader over the whole text; positions are byte offsets.
struct Reader {
  std::string_view s;
  std::size_t pos = 0;

  Error fail(const std::string& what) const {
    return make_error(ErrorCode::kInvalidArgument, "JSON: " + what + " at offset " + std::to_string(pos));
  }
  void skip_ws() {
    while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t' || s[pos] == '\n' || s[pos] == '\r')) ++pos;
  }
  bool consume(std::string_view word) {
    if (s.substr(pos, word.size()) != word) return false;
    pos += word.size();
    return true;
  }

  Result<Value> value(int depth) {
    if (depth > kMaxJsonDepth) return fail("nesting too deep");
    skip_ws();
    if (pos >= s.size()) return fail("unexpected end");
    const char c = s[pos];
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    if (c == '"') {
      HEARTH_ASSIGN_OR_RETURN(std::string str, string());
      return Value(std::move(str));
    }
    if (consume("null")) return Value::none();
    if (consume("true")) return Value(true);
    if (consume("false")) return Value(false);
    if (consume("NaN")) return Value(std::nan(""));
    if (consume("Infinity")) return Value(HUGE_VAL);
    if (consume("-Infinity")) return Value(-HUGE_VAL);
    return number();
  }

  Result<Value> number() {
    const std::size_t start = pos;
    if (pos < s.size() && s[pos] == '-') ++pos;
    bool is_float = false;
    while (pos < s.size()) {
      const char c = s[pos];
      if (c >= '0' && c <= '9') {
      } else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
        is_float = true;
      } else {
        break;
      }
      ++pos;
    }
    const std::string_view text = s.substr(start, pos - start);
    if (text.empty() || text == "-") return fail("unexpected character");
    if (!is_float) {
      std::int64_t i = 0;
      const auto r = std::from_chars(text.data(), text.data() + text.size(), i);
      if (r.ec == std::errc() && r.ptr == text.data() + text.size()) return Value(i);
    }
    const std::string copy(text);
    char* end = nullptr;
    const double d = std::strtod(copy.c_str(), &end);
    if (end != copy.c_str() + copy.size()) return fail("malformed number");
    return Value(d);
  }

  Result<std::uint32_t> hex4() {
    if (pos + 4 > s.size()) return fail("short \\u escape");
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = s[pos++];
      v <<= 4;
      if (c >= '0' && c <= '9') {
        v |= static_cast<std::uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        v |= static_cast<std::uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        v |= static_cast<std::uint32_t>(c - 'A' + 10);
      } else {
        return fail("bad \\u escape");
      }
    }
    return v;
  }

  Result<void> escape(std::string& out) {
    if (pos >= s.size()) return fail("unterminated string");
    const char e = s[pos++];
    switch (e) {
      case '"':
      case '\\':
      case '/':
        out.push_back(e);
        return {};
      case 'n':
        out.push_back('\n');
        return {};
      case 't':
        out.push_back('\t');
        return {};
      case 'r':
        out.push_back('\r');
        return {};
      case 'b':
        out.push_back('\b');
        return {};
      case 'f':
        out.push_back('\f');
        return {};
      case 'u':
        break;
      default:
        return fail("bad escape");
    }
    HEARTH_ASSIGN_OR_RETURN(std::uint32_t cp, hex4());
    if (cp >= 0xD800 && cp < 0xDC00 && s.substr(pos, 2) == "\\u") {
      pos += 2;
      HEARTH_ASSIGN_OR_RETURN(std::uint32_t lo, hex4());
      if (lo < 0xDC00 || lo > 0xDFFF) return fail("unpaired surrogate");
      cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    } else if (cp >= 0xD800 && cp <= 0xDFFF) {
      return fail("unpaired surrogate");
    }
    pystr::append_utf8(out, cp);
    return {};
  }

  Result<std::string> string() {
    ++pos;  // opening quote
    std::string out;
    while (true) {
      if (pos >= s.size()) return fail("unterminated string");
      const char c = s[pos++];
      if (c == '"') return out;
      if (c == '\\') {
        HEARTH_TRY(escape(out));
      } else if (static_cast<unsigned char>(c) < 0x20) {
        return fail("control character in string");
      } else {
        out.push_back(c);
      }
    }
  }

  Result<Value> array(int depth) {
    ++pos;
    Value out = Value::list();
    skip_ws();
    if (consume("]")) return out;
    while (true) {
      HEARTH_ASSIGN_OR_RETURN(Value item, value(depth + 1));
      out.push_back(std::move(item));
      skip_ws();
      if (consume("]")) return out;
      if (!consume(",")) return fail("expected ',' or ']'");
    }
  }

  Result<Value> object(int depth) {
    ++pos;
    Value out = Value::dict();
    skip_ws();
    if (consume("}")) return out;
    while (true) {
      skip_ws();
      if (pos >= s.size() || s[pos] != '"') return fail("expected a key string");
      HEARTH_ASSIGN_OR_RETURN(std::string key, string());
      skip_ws();
      if (!consume(":")) return fail("expected ':'");
      HEARTH_ASSIGN_OR_RETURN(Value item, value(depth + 1));
      out.set(Value(std::move(key)), std::move(item));
      skip_ws();
      if (consume("}")) return out;
      if (!consume(",")) return fail("expected ',' or '}'");
    }
  }
};

}  // namespace

Result<std::string> to_json(const Value& value, const JsonDumpOptions& options) {
  Dumper d{options, {}};
  HEARTH_TRY(d.dump(value, 0));
  return std::move(d.out);
}

Result<Value> parse_json(std::string_view text) {
  Reader r{text};
  HEARTH_ASSIGN_OR_RETURN(Value v, r.value(0));
  r.skip_ws();
  if (r.pos != text.size()) return r.fail("trailing characters");
  return v;
}

}  // namespace hearth::jinja
