// The str and dict methods chat templates call (`content.strip()`,
// `message.get('x')`, `d.items()`), with Python's semantics. Mutating methods
// do not exist here: the sandbox is immutable.
#include <algorithm>
#include <array>

#include "engine/jinja/operations.h"
#include "engine/jinja/pystr.h"

namespace hearth::jinja {
namespace {

constexpr std::array<std::string_view, 24> kStringMethods = {
    "strip", "lstrip",  "rstrip",  "split",      "rsplit",  "splitlines", "startswith", "endswith",
    "upper", "lower",   "title",   "capitalize", "replace", "find",       "rfind",      "count",
    "join",  "isdigit", "isalpha", "isalnum",    "isspace", "isupper",    "islower",    "format"};
constexpr std::array<std::string_view, 4> kDictMethods = {"get", "items", "keys", "values"};

const Value* arg_at(const CallArgs& a, std::size_t i, std::string_view name) {
  if (i < a.args.size()) return &a.args[i];
  return a.kwarg(name);
}

Result<const std::string*> optional_string(const CallArgs& a, std::size_t i, std::string_view name,
                                           std::string_view method) {
  const Value* v = arg_at(a, i, name);
  if (v == nullptr || v->is_none()) return static_cast<const std::string*>(nullptr);
  if (!v->is_string()) return make_error(ErrorCode::kInvalidArgument, std::string(method) + "() argument must be str");
  return &v->as_string();
}

long optional_int(const CallArgs& a, std::size_t i, std::string_view name, long fallback) {
  const Value* v = arg_at(a, i, name);
  if (v == nullptr || !(v->is_int() || v->is_bool())) return fallback;
  return static_cast<long>(v->as_int());
}

Value string_list(std::vector<std::string> parts) {
  std::vector<Value> out;
  out.reserve(parts.size());
  for (auto& p : parts) out.emplace_back(std::move(p));
  return Value::list(std::move(out));
}

// Python str.title(): a cased character after an uncased one starts a word.
std::string python_title(const std::string& s) {
  std::u32string cps = pystr::decode(s);
  bool prev_cased = false;
  for (auto& c : cps) {
    const std::string one = pystr::encode(std::u32string(1, c));
    const bool cased = pystr::upper(one) != pystr::lower(one);
    if (cased) {
      const std::string mapped = prev_cased ? pystr::lower(one) : pystr::upper(one);
      c = pystr::decode(mapped)[0];
    }
    prev_cased = cased;
  }
  return pystr::encode(cps);
}

Result<bool> affix_match(const std::string& s, const Value& affix, bool prefix) {
  auto one = [&](const Value& v) -> Result<bool> {
    if (!v.is_string()) return make_error(ErrorCode::kInvalidArgument, "startswith/endswith expects str or tuple");
    const std::string& a = v.as_string();
    if (a.size() > s.size()) return false;
    return prefix ? s.compare(0, a.size(), a) == 0 : s.compare(s.size() - a.size(), a.size(), a) == 0;
  };
  if (!affix.is_list()) return one(affix);
  for (const auto& v : affix.items()) {
    HEARTH_ASSIGN_OR_RETURN(bool m, one(v));
    if (m) return true;
  }
  return false;
}

bool all_chars(const std::string& s, bool (*pred)(char32_t)) {
  const std::u32string cps = pystr::decode(s);
  return !cps.empty() && std::all_of(cps.begin(), cps.end(), pred);
}

Result<Value> string_method(const std::string& s, std::string_view name, const CallArgs& a) {
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    HEARTH_ASSIGN_OR_RETURN(const std::string* chars, optional_string(a, 0, "chars", name));
    const std::u32string set = chars ? pystr::decode(*chars) : std::u32string();
    return Value(pystr::strip(s, name != "rstrip", name != "lstrip", chars ? &set : nullptr));
  }
  if (name == "split" || name == "rsplit") {
    HEARTH_ASSIGN_OR_RETURN(const std::string* sep, optional_string(a, 0, "sep", name));
    if (sep != nullptr && sep->empty()) return make_error(ErrorCode::kInvalidArgument, "empty separator");
    const long maxsplit = optional_int(a, 1, "maxsplit", -1);
    return string_list(name == "split" ? pystr::split(s, sep, maxsplit) : pystr::rsplit(s, sep, maxsplit));
  }
  if (name == "splitlines") {
    const Value* keep = arg_at(a, 0, "keepends");
    return string_list(pystr::splitlines(s, keep != nullptr && keep->truthy()));
  }
  if (name == "startswith" || name == "endswith") {
    const Value* affix = arg_at(a, 0, name == "startswith" ? "prefix" : "suffix");
    if (affix == nullptr) return make_error(ErrorCode::kInvalidArgument, std::string(name) + "() takes an argument");
    HEARTH_ASSIGN_OR_RETURN(bool m, affix_match(s, *affix, name == "startswith"));
    return Value(m);
  }
  if (name == "upper") return Value(pystr::upper(s));
  if (name == "lower") return Value(pystr::lower(s));
  if (name == "title") return Value(python_title(s));
  if (name == "capitalize") return Value(pystr::capitalize(s));
  if (name == "replace") {
    const Value* o = arg_at(a, 0, "old");
    const Value* n = arg_at(a, 1, "new");
    if (o == nullptr || n == nullptr || !o->is_string() || !n->is_string()) {
      return make_error(ErrorCode::kInvalidArgument, "replace() takes two strings");
    }
    return replace_checked(s, o->as_string(), n->as_string(), optional_int(a, 2, "count", -1));
  }
  if (name == "find" || name == "rfind" || name == "count") {
    const Value* sub = arg_at(a, 0, "sub");
    if (sub == nullptr || !sub->is_string()) return make_error(ErrorCode::kInvalidArgument, "expected a string");
    if (name == "count") return Value(static_cast<std::int64_t>(pystr::count(s, sub->as_string())));
    return Value(static_cast<std::int64_t>(pystr::find(s, sub->as_string(), name == "rfind")));
  }
  if (name == "join") {
    const Value* it = arg_at(a, 0, "iterable");
    if (it == nullptr) return make_error(ErrorCode::kInvalidArgument, "join() takes an iterable");
    HEARTH_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(*it));
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (!items[i].is_string()) return make_error(ErrorCode::kInvalidArgument, "join() expects str items");
      HEARTH_TRY(check_value_bytes(out.size() + s.size() + items[i].as_string().size(), "join()"));
      if (i > 0) out += s;
      out += items[i].as_string();
    }
    return Value(std::move(out));
  }
  if (name == "isdigit") return Value(all_chars(s, [](char32_t c) { return c >= '0' && c <= '9'; }));
  if (name == "isalpha") {
    return Value(
        all_chars(s, [](char32_t c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0xC0; }));
  }
  if (name == "isalnum") {
    return Value(all_chars(s, [](char32_t c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0xC0;
    }));
  }
  if (name == "isspace") return Value(all_chars(s, pystr::is_space));
  if (name == "isupper" || name == "islower") {
    const bool want_upper = name == "isupper";
    const bool cased = pystr::upper(s) != pystr::lower(s);
    return Value(cased && (want_upper ? pystr::upper(s) == s : pystr::lower(s) == s));
  }
  return make_error(ErrorCode::kUnsupported, "unsupported method 'str." + std::string(name) + "'");
}

Result<Value> dict_method(const Dict& d, std::string_view name, const CallArgs& a) {
  if (name == "get") {
    const Value* key = arg_at(a, 0, "key");
    if (key == nullptr) return make_error(ErrorCode::kInvalidArgument, "get() takes a key");
    if (const Value* v = d.find(*key)) return *v;
    const Value* def = arg_at(a, 1, "default");
    return def ? *def : Value::none();
  }
  std::vector<Value> out;
  for (const auto& [k, v] : d.entries) {
    if (name == "keys") {
      out.push_back(k);
    } else if (name == "values") {
      out.push_back(v);
    } else {
      out.push_back(Value::tuple({k, v}));
    }
  }
  return Value::list(std::move(out));
}

}  // namespace

bool has_method(const Value& obj, std::string_view name) {
  if (obj.is_string()) return std::find(kStringMethods.begin(), kStringMethods.end(), name) != kStringMethods.end();
  if (obj.is_dict()) return std::find(kDictMethods.begin(), kDictMethods.end(), name) != kDictMethods.end();
  return false;
}

Result<Value> call_method(const Value& obj, std::string_view name, const CallArgs& args) {
  if (obj.is_string()) return string_method(obj.as_string(), name, args);
  if (obj.is_dict()) return dict_method(obj.dict_value(), name, args);
  return make_error(ErrorCode::kUnsupported,
                    std::string("unsupported method '") + obj.type_name() + "." + std::string(name) + "'");
}

}  // namespace hearth::jinja
