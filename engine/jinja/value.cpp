#include "engine/jinja/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "engine/jinja/pystr.h"

namespace hearth::jinja {

const Value* CallArgs::kwarg(std::string_view name) const {
  for (const auto& [k, v] : kwargs) {
    if (k == name) return &v;
  }
  return nullptr;
}

const Value* Dict::find(const Value& key) const {
  for (const auto& [k, v] : entries) {
    if (equals(k, key)) return &v;
  }
  return nullptr;
}

const Value* Dict::find(std::string_view key) const {
  for (const auto& [k, v] : entries) {
    if (k.is_string() && k.as_string() == key) return &v;
  }
  return nullptr;
}

namespace {

// Frees values with a worklist: each popped value hands over the children of
// the container it alone owns, so the container dies empty (no recursion).
void drain(std::vector<Value>& pending) {
  while (!pending.empty()) {
    Value v = std::move(pending.back());
    pending.pop_back();
    v.release_children(pending);
  }
}

}  // namespace

List::List(std::vector<Value> v, bool tuple) : items(std::move(v)), is_tuple(tuple) {
  for (const auto& item : items) {
    depth = std::max(depth, item.depth() + 1);
    holds_namespace = holds_namespace || item.holds_namespace();
  }
}

List::~List() {
  if (items.empty()) return;
  std::vector<Value> pending = std::move(items);
  drain(pending);
}

Dict::~Dict() {
  if (entries.empty()) return;
  std::vector<Value> pending;
  pending.reserve(entries.size() * 2);
  for (auto& [k, v] : entries) {
    pending.push_back(std::move(k));
    pending.push_back(std::move(v));
  }
  entries.clear();
  drain(pending);
}

void Dict::set(Value key, Value value) {
  depth = std::max({depth, key.depth() + 1, value.depth() + 1});
  holds_namespace = holds_namespace || key.holds_namespace() || value.holds_namespace();
  for (auto& [k, v] : entries) {
    if (equals(k, key)) {
      v = std::move(value);
      return;
    }
  }
  entries.emplace_back(std::move(key), std::move(value));
}

Value Value::list(std::vector<Value> items) {
  Value v;
  v.data_ = std::make_shared<List>(std::move(items), false);
  return v;
}

Value Value::tuple(std::vector<Value> items) {
  Value v;
  v.data_ = std::make_shared<List>(std::move(items), true);
  return v;
}

Value Value::dict() {
  Value v;
  v.data_ = std::make_shared<Dict>();
  return v;
}

Value Value::dict(std::vector<std::pair<std::string, Value>> entries) {
  Value v = dict();
  for (auto& [k, val] : entries) v.set(Value(std::move(k)), std::move(val));
  return v;
}

Value Value::namespace_object() {
  Value v = dict();
  std::get<std::shared_ptr<Dict>>(v.data_)->is_namespace = true;
  return v;
}

Value Value::function(std::string name, NativeFunction fn) {
  Value v;
  v.data_ = std::make_shared<Callable>(Callable{std::move(name), std::move(fn)});
  return v;
}

std::int64_t Value::as_int() const {
  if (is_bool()) return as_bool() ? 1 : 0;
  return std::get<std::int64_t>(data_);
}

double Value::as_double() const {
  if (is_float()) return std::get<double>(data_);
  return static_cast<double>(as_int());
}

void Value::push_back(Value v) {
  List& l = *std::get<std::shared_ptr<List>>(data_);
  l.depth = std::max(l.depth, v.depth() + 1);
  l.holds_namespace = l.holds_namespace || v.holds_namespace();
  l.items.push_back(std::move(v));
}

void Value::take_entries(std::vector<Value>& out) {
  if (kind() != Kind::kDict) return;
  for (auto& [k, v] : dict_ptr()->entries) {
    out.push_back(std::move(k));
    out.push_back(std::move(v));
  }
  dict_ptr()->entries.clear();
}

std::uint32_t Value::depth() const {
  if (kind() == Kind::kList) return list_ptr()->depth;
  if (kind() == Kind::kDict) return dict_ptr()->depth;
  return 0;
}

bool Value::holds_namespace() const {
  if (kind() == Kind::kList) return list_ptr()->holds_namespace;
  if (kind() == Kind::kDict) return dict_ptr()->is_namespace || dict_ptr()->holds_namespace;
  return false;
}

void Value::release_children(std::vector<Value>& out) {
  if (auto* l = std::get_if<std::shared_ptr<List>>(&data_); l != nullptr && l->use_count() == 1) {
    for (auto& item : (*l)->items) out.push_back(std::move(item));
    (*l)->items.clear();
  } else if (auto* d = std::get_if<std::shared_ptr<Dict>>(&data_); d != nullptr && d->use_count() == 1) {
    for (auto& [k, v] : (*d)->entries) {
      out.push_back(std::move(k));
      out.push_back(std::move(v));
    }
    (*d)->entries.clear();
  }
}

void Value::set(Value key, Value v) {
  std::get<std::shared_ptr<Dict>>(data_)->set(std::move(key), std::move(v));
}

const Value* Value::get(std::string_view key) const {
  if (kind() != Kind::kDict) return nullptr;
  return dict_ptr()->find(key);
}

bool Value::truthy() const {
  switch (kind()) {
    case Kind::kUndefined:
    case Kind::kNone:
      return false;
    case Kind::kBool:
      return as_bool();
    case Kind::kInt:
      return as_int() != 0;
    case Kind::kFloat:
      return as_double() != 0.0;
    case Kind::kString:
      return !as_string().empty();
    case Kind::kList:
      return !items().empty();
    case Kind::kDict:
      return is_namespace() || !dict_value().entries.empty();
    case Kind::kCallable:
      return true;
  }
  return false;
}

const char* Value::type_name() const {
  switch (kind()) {
    case Kind::kUndefined:
      return "undefined";
    case Kind::kNone:
      return "NoneType";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kFloat:
      return "float";
    case Kind::kString:
      return "str";
    case Kind::kList:
      return is_tuple() ? "tuple" : "list";
    case Kind::kDict:
      return is_namespace() ? "Namespace" : "dict";
    case Kind::kCallable:
      return "function";
  }
  return "object";
}

std::string python_float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  // Shortest round-trip digits in scientific form: [-]d[.ddd]e[+-]x.
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  const std::size_t e_pos = sci.find('e');
  std::string mant = sci.substr(0, e_pos);
  const int exp10 = std::stoi(sci.substr(e_pos + 1));
  std::string sign;
  if (mant[0] == '-') {
    sign = "-";
    mant.erase(0, 1);
  }
  std::string digits;
  for (char c : mant) {
    if (c != '.') digits.push_back(c);
  }
  const int n = static_cast<int>(digits.size());
  if (exp10 < -4 || exp10 >= 16) {
    std::string out = sign + digits.substr(0, 1);
    if (n > 1) out += "." + digits.substr(1);
    char ebuf[16];
    std::snprintf(ebuf, sizeof(ebuf), "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
    return out + ebuf;
  }
  if (exp10 < 0) return sign + "0." + std::string(static_cast<std::size_t>(-exp10 - 1), '0') + digits;
  const auto int_len = static_cast<std::size_t>(exp10 + 1);
  if (digits.size() <= int_len) return sign + digits + std::string(int_len - digits.size(), '0') + ".0";
  return sign + digits.substr(0, int_len) + "." + digits.substr(int_len);
}

namespace {

// Python's repr of a str: single quotes unless the text holds ' and no ".
void repr_string(const std::string& s, std::string& out) {
  const bool has_single = s.find('\'') != std::string::npos;
  const bool has_double = s.find('"') != std::string::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  out.push_back(quote);
  for (char32_t c : pystr::decode(s)) {
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F || (c >= 0x80 && c < 0xA0) || (c >= 0xDC80 && c <= 0xDCFF)) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", static_cast<unsigned>(c & 0xFF));
      out += buf;
    } else {
      pystr::append_utf8(out, c);
    }
  }
  out.push_back(quote);
}

// Appends repr(v) to one buffer and stops once it holds more than
// kMaxValueBytes: a list of a million references to one large string would
// otherwise print terabytes. The caller sees the overlong text and refuses it.
void repr_into(const Value& v, std::string& out) {
  if (out.size() > kMaxValueBytes) return;
  if (v.is_string()) return repr_string(v.as_string(), out);
  if (v.is_undefined()) {
    out += "Undefined";
    return;
  }
  if (v.is_list()) {
    out += v.is_tuple() ? "(" : "[";
    const auto& items = v.items();
    for (std::size_t i = 0; i < items.size() && out.size() <= kMaxValueBytes; ++i) {
      if (i > 0) out += ", ";
      repr_into(items[i], out);
    }
    if (v.is_tuple() && items.size() == 1) out += ",";
    out += v.is_tuple() ? ")" : "]";
    return;
  }
  if (v.kind() != Value::Kind::kDict) {
    out += v.str();
    return;
  }
  out += v.is_namespace() ? "<Namespace {" : "{";
  bool first = true;
  for (const auto& [k, val] : v.dict_value().entries) {
    if (out.size() > kMaxValueBytes) break;
    if (!first) out += ", ";
    first = false;
    repr_into(k, out);
    out += ": ";
    repr_into(val, out);
  }
  out += v.is_namespace() ? "}>" : "}";
}

}  // namespace

std::string Value::str() const {
  switch (kind()) {
    case Kind::kUndefined:
      return "";
    case Kind::kNone:
      return "None";
    case Kind::kBool:
      return as_bool() ? "True" : "False";
    case Kind::kInt:
      return std::to_string(as_int());
    case Kind::kFloat:
      return python_float_repr(as_double());
    case Kind::kString:
      return as_string();
    case Kind::kList:
    case Kind::kDict: {
      std::string out;
      repr_into(*this, out);
      return out;
    }
    case Kind::kCallable:
      return "<function " + callable().name + ">";
  }
  return "";
}

std::string Value::repr() const {
  std::string out;
  repr_into(*this, out);
  return out;
}

bool equals(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone:
      return true;
    case Value::Kind::kString:
      return a.as_string() == b.as_string();
    case Value::Kind::kList: {
      if (a.is_tuple() != b.is_tuple() || a.items().size() != b.items().size()) return false;
      for (std::size_t i = 0; i < a.items().size(); ++i) {
        if (!equals(a.items()[i], b.items()[i])) return false;
      }
      return true;
    }
    case Value::Kind::kDict: {
      const auto& da = a.dict_value();
      const auto& db = b.dict_value();
      if (da.is_namespace || db.is_namespace) return &da == &db;
      if (da.entries.size() != db.entries.size()) return false;
      for (const auto& [k, v] : da.entries) {
        const Value* other = db.find(k);
        if (other == nullptr || !equals(v, *other)) return false;
      }
      return true;
    }
    case Value::Kind::kCallable:
      return &a.callable() == &b.callable();
    default:
      return false;
  }
}

Result<bool> less_than(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() < b.as_double();
    return a.as_int() < b.as_int();
  }
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();  // UTF-8 order = code point order
  if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
    const auto& x = a.items();
    const auto& y = b.items();
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (equals(x[i], y[i])) continue;
      return less_than(x[i], y[i]);
    }
    return x.size() < y.size();
  }
  return make_error(ErrorCode::kInvalidArgument, std::string("'<' not supported between instances of '") +
                                                     a.type_name() + "' and '" + b.type_name() + "'");
}

}  // namespace hearth::jinja
