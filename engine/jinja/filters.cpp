// Scalar and string filters, and the filter dispatch table.
#include "engine/jinja/filters.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "engine/jinja/filter_args.h"
#include "engine/jinja/json.h"
#include "engine/jinja/operations.h"
#include "engine/jinja/pystr.h"

namespace hearth::jinja {
namespace {

using filter_detail::arg;
using filter_detail::FilterEntry;

Result<Value> f_trim(const Value& v, const CallArgs& a) {
  const Value* chars = arg(a, 0, "chars");
  if (chars != nullptr && chars->is_string()) {
    const std::u32string set = pystr::decode(chars->as_string());
    return Value(pystr::strip(v.str(), true, true, &set));
  }
  return Value(pystr::strip(v.str(), true, true, nullptr));
}

Result<Value> f_upper(const Value& v, const CallArgs&) {
  return Value(pystr::upper(v.str()));
}
Result<Value> f_lower(const Value& v, const CallArgs&) {
  return Value(pystr::lower(v.str()));
}
Result<Value> f_title(const Value& v, const CallArgs&) {
  return Value(pystr::title_jinja(v.str()));
}
Result<Value> f_capitalize(const Value& v, const CallArgs&) {
  return Value(pystr::capitalize(v.str()));
}
Result<Value> f_string(const Value& v, const CallArgs&) {
  return Value(v.str());
}
Result<Value> f_safe(const Value& v, const CallArgs&) {
  return Value(v.str());
}

Result<Value> f_escape(const Value& v, const CallArgs&) {
  std::string out;
  for (char c : v.str()) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return Value(std::move(out));
}

Result<Value> f_length(const Value& v, const CallArgs&) {
  HEARTH_ASSIGN_OR_RETURN(std::int64_t n, length_of(v));
  return Value(n);
}

Result<Value> f_default(const Value& v, const CallArgs& a) {
  const Value* def = arg(a, 0, "default_value");
  const Value* boolean = arg(a, 1, "boolean");
  const bool use_default = v.is_undefined() || (boolean != nullptr && boolean->truthy() && !v.truthy());
  if (!use_default) return v;
  return def ? *def : Value("");
}

Result<Value> f_replace(const Value& v, const CallArgs& a) {
  const Value* o = arg(a, 0, "old");
  const Value* n = arg(a, 1, "new");
  const Value* c = arg(a, 2, "count");
  if (o == nullptr || n == nullptr) return make_error(ErrorCode::kInvalidArgument, "replace filter needs old and new");
  const long count = c != nullptr && (c->is_int() || c->is_bool()) ? static_cast<long>(c->as_int()) : -1;
  return replace_checked(v.str(), o->str(), n->str(), count);
}

// Python int(str): optional sign, digits with single underscores, surrounding whitespace.
bool parse_python_int(const std::string& text, int base, std::int64_t& out) {
  std::string s = pystr::strip(text, true, true, nullptr);
  std::string digits;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_' && i > 0 && i + 1 < s.size() && std::isalnum(static_cast<unsigned char>(s[i - 1])) &&
        std::isalnum(static_cast<unsigned char>(s[i + 1]))) {
      continue;
    }
    digits.push_back(s[i]);
  }
  if (digits.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(digits.c_str(), &end, base);
  if (errno != 0 || end != digits.c_str() + digits.size() || digits.find_first_of(" \t") != std::string::npos) {
    return false;
  }
  out = v;
  return true;
}

bool parse_python_float(const std::string& text, double& out) {
  const std::string s = pystr::strip(text, true, true, nullptr);
  if (s.empty() || s.find('_') != std::string::npos) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && s.find_first_of("xXpP") == std::string::npos;
}

Result<Value> f_int(const Value& v, const CallArgs& a) {
  const Value* def = arg(a, 0, "default");
  const Value* base_v = arg(a, 1, "base");
  const Value fallback = def ? *def : Value(0);
  if (v.is_int() || v.is_bool()) return Value(v.as_int());
  if (v.is_float()) {
    const double d = std::trunc(v.as_double());
    if (!std::isfinite(d) || std::fabs(d) > 9.2e18) return fallback;
    return Value(static_cast<std::int64_t>(d));
  }
  if (!v.is_string()) return fallback;
  const int base = base_v != nullptr && base_v->is_int() ? static_cast<int>(base_v->as_int()) : 10;
  std::int64_t i = 0;
  if (parse_python_int(v.as_string(), base, i)) return Value(i);
  double d = 0;
  if (parse_python_float(v.as_string(), d) && std::isfinite(d) && std::fabs(d) < 9.2e18) {
    return Value(static_cast<std::int64_t>(std::trunc(d)));
  }
  return fallback;
}

Result<Value> f_float(const Value& v, const CallArgs& a) {
  const Value* def = arg(a, 0, "default");
  if (v.is_number()) return Value(v.as_double());
  double d = 0;
  if (v.is_string() && parse_python_float(v.as_string(), d)) return Value(d);
  return def ? *def : Value(0.0);
}

Result<Value> f_abs(const Value& v, const CallArgs&) {
  if (v.is_float()) return Value(std::fabs(v.as_double()));
  if (v.is_int() || v.is_bool()) {
    if (v.as_int() == INT64_MIN) return make_error(ErrorCode::kUnsupported, "integer overflow: abs() of -2**63");
    return Value(v.as_int() < 0 ? -v.as_int() : v.as_int());
  }
  return make_error(ErrorCode::kInvalidArgument, std::string("bad operand type for abs(): '") + v.type_name() + "'");
}

// round(value, precision=0, method='common'): Python's round() (half to even on
// the exact binary value) for 'common'; math.ceil/floor otherwise. Always a float.
Result<Value> f_round(const Value& v, const CallArgs& a) {
  const Value* p = arg(a, 0, "precision");
  const Value* m = arg(a, 1, "method");
  const int precision = p != nullptr && p->is_int() ? static_cast<int>(p->as_int()) : 0;
  const std::string method = m != nullptr ? m->str() : "common";
  if (!v.is_number()) return make_error(ErrorCode::kInvalidArgument, "round filter needs a number");
  if (method == "common") {
    if (!v.is_float()) return Value(v.as_int());
    if (precision < 0 || precision > 300) return make_error(ErrorCode::kUnsupported, "round precision out of range");
    char buf[512];
    std::snprintf(buf, sizeof(buf), "%.*f", precision, v.as_double());
    return Value(std::strtod(buf, nullptr));
  }
  if (method != "ceil" && method != "floor") {
    return make_error(ErrorCode::kInvalidArgument, "method must be common, ceil or floor");
  }
  const double scale = std::pow(10.0, precision);
  const double x = v.as_double() * scale;
  return Value((method == "ceil" ? std::ceil(x) : std::floor(x)) / scale);
}

// An indent argument (indent()'s width, tojson's indent): an int of spaces or
// a string, at most kMaxIndent wide; jinja2 takes any width, but a width of
// 10**10 would allocate 10 GB per line.
constexpr std::int64_t kMaxIndent = 256;

Result<std::string> indent_text(const Value& w, std::string_view filter) {
  if (w.is_string()) {
    if (w.as_string().size() > static_cast<std::size_t>(kMaxIndent)) {
      return make_error(ErrorCode::kInvalidArgument,
                        std::string(filter) + ": indent longer than " + std::to_string(kMaxIndent) + " bytes");
    }
    return w.as_string();
  }
  if (!w.is_int() && !w.is_bool()) {
    return make_error(ErrorCode::kInvalidArgument, std::string(filter) + ": indent must be an int or a string");
  }
  if (w.as_int() > kMaxIndent) {
    return make_error(ErrorCode::kInvalidArgument, std::string(filter) + ": indent " + std::to_string(w.as_int()) +
                                                       " is wider than " + std::to_string(kMaxIndent));
  }
  return std::string(static_cast<std::size_t>(std::max<std::int64_t>(0, w.as_int())), ' ');
}

Result<Value> f_indent(const Value& v, const CallArgs& a) {
  const Value* w = arg(a, 0, "width");
  const Value* first = arg(a, 1, "first");
  const Value* blank = arg(a, 2, "blank");
  std::string indention = "    ";
  if (w != nullptr) {
    HEARTH_ASSIGN_OR_RETURN(indention, indent_text(*w, "indent"));
  }
  const std::string s = v.str() + "\n";  // jinja2 appends a newline so splitlines keeps a trailing empty line
  const std::vector<std::string> lines = pystr::splitlines(s, false);
  HEARTH_TRY(check_value_bytes(s.size() + (lines.size() + 1) * indention.size(), "indent"));
  std::string out;
  if (blank != nullptr && blank->truthy()) {
    for (std::size_t i = 0; i < lines.size(); ++i) out += (i ? "\n" + indention : "") + lines[i];
  } else if (!lines.empty()) {
    out = lines[0];
    for (std::size_t i = 1; i < lines.size(); ++i) out += "\n" + (lines[i].empty() ? "" : indention) + lines[i];
  }
  if (first != nullptr && first->truthy()) out = indention + out;
  return Value(std::move(out));
}

// transformers' tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False).
Result<Value> f_tojson(const Value& v, const CallArgs& a) {
  JsonDumpOptions opt;
  const Value* ascii = arg(a, 0, "ensure_ascii");
  const Value* indent = arg(a, 1, "indent");
  const Value* seps = arg(a, 2, "separators");
  const Value* sort = arg(a, 3, "sort_keys");
  if (ascii != nullptr && ascii->truthy()) opt.ensure_ascii = true;
  if (indent != nullptr && !indent->is_none()) {
    HEARTH_ASSIGN_OR_RETURN(opt.indent, indent_text(*indent, "tojson"));
    opt.item_separator = ",";
  }
  if (seps != nullptr && !seps->is_none()) {
    if (!seps->is_list() || seps->items().size() != 2 || !seps->items()[0].is_string() ||
        !seps->items()[1].is_string()) {
      return make_error(ErrorCode::kInvalidArgument, "tojson: separators must be two strings");
    }
    opt.item_separator = seps->items()[0].as_string();
    opt.key_separator = seps->items()[1].as_string();
  }
  opt.sort_keys = sort != nullptr && sort->truthy();
  HEARTH_ASSIGN_OR_RETURN(std::string text, to_json(v, opt));
  return Value(std::move(text));
}

Result<Value> f_wordcount(const Value& v, const CallArgs&) {
  std::int64_t n = 0;
  bool in_word = false;
  for (char32_t c : pystr::decode(v.str())) {
    const bool word =
        c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0xC0;
    if (word && !in_word) ++n;
    in_word = word;
  }
  return Value(n);
}

const std::vector<FilterEntry>& scalar_filters() {
  static const std::vector<FilterEntry> table = {
      {"trim", f_trim},
      {"upper", f_upper},
      {"lower", f_lower},
      {"title", f_title},
      {"capitalize", f_capitalize},
      {"string", f_string},
      {"safe", f_safe},
      {"e", f_escape},
      {"escape", f_escape},
      {"length", f_length},
      {"count", f_length},
      {"default", f_default},
      {"d", f_default},
      {"replace", f_replace},
      {"int", f_int},
      {"float", f_float},
      {"abs", f_abs},
      {"round", f_round},
      {"indent", f_indent},
      {"tojson", f_tojson},
      {"wordcount", f_wordcount},
  };
  return table;
}

filter_detail::FilterFn find_filter(std::string_view name) {
  for (const auto* table : {&scalar_filters(), &filter_detail::sequence_filters()}) {
    for (const auto& e : *table) {
      if (e.name == name) return e.fn;
    }
  }
  return nullptr;
}

}  // namespace

bool is_known_filter(std::string_view name) {
  return find_filter(name) != nullptr;
}

Result<Value> apply_filter(std::string_view name, const Value& input, const CallArgs& args) {
  const auto fn = find_filter(name);
  if (fn == nullptr) return make_error(ErrorCode::kUnsupported, "unsupported filter '" + std::string(name) + "'");
  return fn(input, args);
}

}  // namespace hearth::jinja
