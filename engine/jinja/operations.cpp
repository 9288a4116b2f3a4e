#include "engine/jinja/operations.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "engine/jinja/pystr.h"

namespace hearth::jinja {
namespace {

Error type_error(std::string_view op, const Value& a, const Value& b) {
  return make_error(ErrorCode::kInvalidArgument, "unsupported operand type(s) for " + std::string(op) + ": '" +
                                                     a.type_name() + "' and '" + b.type_name() + "'");
}

Value bound_method(const Value& obj, std::string_view name) {
  std::string n(name);
  return Value::function(n, [obj, n](const CallArgs& args) { return call_method(obj, n, args); });
}

// Python's index normalisation for a sequence of `n` elements; false when out of range.
bool normalize_index(std::int64_t& i, std::size_t n) {
  if (i < 0) i += static_cast<std::int64_t>(n);
  return i >= 0 && i < static_cast<std::int64_t>(n);
}

Error too_large(std::string_view what, std::size_t limit, std::string_view unit) {
  return make_error(ErrorCode::kOutOfMemory, "chat template: " + std::string(what) + " would exceed " +
                                                 std::to_string(limit) + " " + std::string(unit) +
                                                 " (limit on one value)");
}

Result<Value> repeat(const Value& seq, std::int64_t times) {
  if (times < 0) times = 0;
  if (seq.is_string()) {
    if (static_cast<double>(seq.as_string().size()) * static_cast<double>(times) > kMaxValueBytes) {
      return too_large("string repetition", kMaxValueBytes, "bytes");
    }
    // By doubling: log2(times) copies of growing size rather than `times`
    // appends ('a' * 1000000 took seconds under the sanitizers, past the
    // fuzzer's timeout, since the deadline is only checked between steps).
    const std::string& unit = seq.as_string();
    const std::size_t total = unit.size() * static_cast<std::size_t>(times);
    std::string out;
    out.reserve(total);
    if (total > 0) out = unit;
    while (out.size() < total) out.append(out, 0, std::min(out.size(), total - out.size()));
    return Value(std::move(out));
  }
  if (static_cast<double>(seq.items().size()) * static_cast<double>(times) > kMaxValueItems) {
    return too_large("list repetition", kMaxValueItems, "items");
  }
  // Items are copied: a string item copies its bytes (lists and dicts are
  // shared). Check the copy's size before making it, not after.
  double item_bytes = 0;
  for (const Value& v : seq.items()) {
    item_bytes += static_cast<double>(sizeof(Value)) + (v.is_string() ? static_cast<double>(v.as_string().size()) : 0);
  }
  if (item_bytes * static_cast<double>(times) > kMaxValueBytes) {
    return too_large("list repetition", kMaxValueBytes, "bytes");
  }
  std::vector<Value> out;
  // An empty list passes every size check: [] * 10**12 must not loop 10**12 times.
  if (seq.items().empty()) times = 0;
  for (std::int64_t i = 0; i < times; ++i) out.insert(out.end(), seq.items().begin(), seq.items().end());
  return seq.is_tuple() ? Value::tuple(std::move(out)) : Value::list(std::move(out));
}

Result<Value> int_op(char op, std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  bool overflow = false;
  switch (op) {
    case '+':
      overflow = __builtin_add_overflow(a, b, &r);
      break;
    case '-':
      overflow = __builtin_sub_overflow(a, b, &r);
      break;
    case '*':
      overflow = __builtin_mul_overflow(a, b, &r);
      break;
    default:
      break;
  }
  if (overflow) return make_error(ErrorCode::kUnsupported, "integer overflow: the result does not fit in 64 bits");
  return Value(r);
}

Error overflow_error(std::string_view what) {
  return make_error(ErrorCode::kUnsupported,
                    "integer overflow: " + std::string(what) + " does not fit in 64 bits (Python would use a big int)");
}

// Python's // and % on ints: the quotient rounds toward minus infinity and the
// remainder takes the divisor's sign. INT64_MIN // -1 is the one quotient that
// does not fit (and C++'s / and % trap on it); any x % -1 is 0. y != 0.
Result<Value> int_floor_div_mod(bool want_quotient, std::int64_t x, std::int64_t y) {
  if (y == -1) {
    if (!want_quotient) return Value(std::int64_t{0});
    if (x == INT64_MIN) return overflow_error("-9223372036854775808 // -1");
    return Value(-x);
  }
  std::int64_t q = x / y;
  std::int64_t m = x % y;
  if (m != 0 && ((m < 0) != (y < 0))) {
    --q;
    m += y;
  }
  return want_quotient ? Value(q) : Value(m);
}

// Exponentiation by squaring: at most 63 squarings, so 1 ** (10**18) and
// (-1) ** 9223372036854775807 are instant; a result past 64 bits is an error.
Result<Value> int_pow(std::int64_t base, std::int64_t exp) {
  std::int64_t result = 1;
  while (exp > 0) {
    if ((exp & 1) != 0 && __builtin_mul_overflow(result, base, &result)) return overflow_error("'**'");
    exp >>= 1;
    if (exp > 0 && __builtin_mul_overflow(base, base, &base)) return overflow_error("'**'");
  }
  return Value(result);
}

Result<Value> arithmetic(std::string_view op, const Value& a, const Value& b) {
  const bool ints = !a.is_float() && !b.is_float();
  if (op == "+" || op == "-" || (op == "*")) {
    if (ints) return int_op(op[0], a.as_int(), b.as_int());
    const double x = a.as_double();
    const double y = b.as_double();
    return Value(op == "+" ? x + y : op == "-" ? x - y : x * y);
  }
  if (op == "/") {
    if (b.as_double() == 0.0) return make_error(ErrorCode::kInvalidArgument, "division by zero");
    return Value(a.as_double() / b.as_double());
  }
  if (op == "//" || op == "%") {
    if (b.as_double() == 0.0) return make_error(ErrorCode::kInvalidArgument, "integer division or modulo by zero");
    if (ints) return int_floor_div_mod(op == "//", a.as_int(), b.as_int());
    // Python's float floor division and modulo (the sign of the result follows the divisor).
    const double x = a.as_double();
    const double y = b.as_double();
    double m = std::fmod(x, y);
    double div = (x - m) / y;
    if (m != 0.0 && ((y < 0) != (m < 0))) {
      m += y;
      div -= 1.0;
    }
    if (op == "%") return Value(m);
    double q = std::floor(div);
    if (div - q > 0.5) q += 1.0;
    return Value(q);
  }
  // "**"
  if (ints && b.as_int() >= 0) return int_pow(a.as_int(), b.as_int());
  if (a.as_double() == 0.0 && b.as_double() < 0.0) {
    return make_error(ErrorCode::kInvalidArgument, "0.0 cannot be raised to a negative power");
  }
  return Value(std::pow(a.as_double(), b.as_double()));
}

}  // namespace

Result<void> check_value_bytes(std::size_t bytes, std::string_view what) {
  if (bytes > kMaxValueBytes) return too_large(what, kMaxValueBytes, "bytes");
  return {};
}

Result<Value> replace_checked(const std::string& s, const std::string& old_s, const std::string& new_s, long count) {
  long n = pystr::count(s, old_s);
  if (count >= 0) n = std::min(n, count);
  if (new_s.size() > old_s.size()) {
    const double grown =
        static_cast<double>(s.size()) + static_cast<double>(n) * static_cast<double>(new_s.size() - old_s.size());
    if (grown > kMaxValueBytes) return too_large("replace()", kMaxValueBytes, "bytes");
  }
  return Value(pystr::replace(s, old_s, new_s, count));
}

Error undefined_error(std::string_view what) {
  return make_error(ErrorCode::kInvalidArgument, "undefined value used: " + std::string(what));
}

Result<Value> get_attr(const Value& obj, std::string_view name) {
  if (obj.is_undefined()) return undefined_error("attribute '" + std::string(name) + "' of an undefined value");
  if (has_method(obj, name)) return bound_method(obj, name);
  if (obj.kind() == Value::Kind::kDict) {
    if (const Value* v = obj.dict_value().find(name)) return *v;
  }
  return Value();
}

Result<Value> get_item(const Value& obj, const Value& key) {
  if (obj.is_undefined()) return undefined_error("item of an undefined value");
  if (obj.is_dict()) {
    if (const Value* v = obj.dict_value().find(key)) return *v;
  } else if ((obj.is_list() || obj.is_string()) && (key.is_int() || key.is_bool())) {
    std::int64_t i = key.as_int();
    if (obj.is_list()) {
      if (normalize_index(i, obj.items().size())) return obj.items()[static_cast<std::size_t>(i)];
      return Value();
    }
    const std::u32string cps = pystr::decode(obj.as_string());
    if (normalize_index(i, cps.size())) return Value(pystr::encode(cps.substr(static_cast<std::size_t>(i), 1)));
    return Value();
  }
  if (key.is_string()) return get_attr(obj, key.as_string());
  return Value();
}

namespace {

// Python slice.indices(): clamps bounds for a sequence of n elements.
Result<std::vector<std::size_t>> slice_indices(std::size_t n, const Value& start, const Value& stop,
                                               const Value& step) {
  const auto len = static_cast<std::int64_t>(n);
  auto as_bound = [](const Value& v) -> Result<bool> {
    if (v.is_undefined() || v.is_none()) return false;
    if (!v.is_int() && !v.is_bool()) {
      return make_error(ErrorCode::kInvalidArgument, "slice indices must be integers or None");
    }
    return true;
  };
  std::int64_t st = 1;
  HEARTH_ASSIGN_OR_RETURN(bool has_step, as_bound(step));
  if (has_step) st = step.as_int();
  if (st == 0) return make_error(ErrorCode::kInvalidArgument, "slice step cannot be zero");
  HEARTH_ASSIGN_OR_RETURN(bool has_start, as_bound(start));
  HEARTH_ASSIGN_OR_RETURN(bool has_stop, as_bound(stop));
  auto clamp = [&](std::int64_t v, bool neg_step) {
    if (v < 0) {
      v += len;
      if (v < 0) v = neg_step ? -1 : 0;
    } else if (v >= len) {
      v = neg_step ? len - 1 : len;
    }
    return v;
  };
  const bool neg = st < 0;
  std::int64_t b = has_start ? clamp(start.as_int(), neg) : (neg ? len - 1 : 0);
  const std::int64_t e = has_stop ? clamp(stop.as_int(), neg) : (neg ? -1 : len);
  std::vector<std::size_t> out;
  for (; neg ? b > e : b < e;) {
    out.push_back(static_cast<std::size_t>(b));
    if (__builtin_add_overflow(b, st, &b)) break;  // a step past the int64 range ends the slice
  }
  return out;
}

}  // namespace

Result<Value> get_slice(const Value& obj, const Value& start, const Value& stop, const Value& step) {
  if (obj.is_undefined()) return undefined_error("slice of an undefined value");
  if (obj.is_string()) {
    const std::u32string cps = pystr::decode(obj.as_string());
    HEARTH_ASSIGN_OR_RETURN(auto idx, slice_indices(cps.size(), start, stop, step));
    std::u32string out;
    for (std::size_t i : idx) out.push_back(cps[i]);
    return Value(pystr::encode(out));
  }
  if (obj.is_list()) {
    HEARTH_ASSIGN_OR_RETURN(auto idx, slice_indices(obj.items().size(), start, stop, step));
    std::vector<Value> out;
    for (std::size_t i : idx) out.push_back(obj.items()[i]);
    return obj.is_tuple() ? Value::tuple(std::move(out)) : Value::list(std::move(out));
  }
  return make_error(ErrorCode::kInvalidArgument, std::string("'") + obj.type_name() + "' object is not subscriptable");
}

Result<std::vector<Value>> iterate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      return std::vector<Value>{};
    case Value::Kind::kList:
      return v.items();
    case Value::Kind::kString: {
      if (v.as_string().size() > kMaxValueItems) return too_large("iterating a string", kMaxValueItems, "characters");
      std::vector<Value> out;
      for (char32_t c : pystr::decode(v.as_string())) out.emplace_back(pystr::encode(std::u32string(1, c)));
      return out;
    }
    case Value::Kind::kDict:
      if (v.is_dict()) {
        std::vector<Value> out;
        for (const auto& kv : v.dict_value().entries) out.push_back(kv.first);
        return out;
      }
      break;
    default:
      break;
  }
  return make_error(ErrorCode::kInvalidArgument, std::string("'") + v.type_name() + "' object is not iterable");
}

Result<std::int64_t> length_of(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      return std::int64_t{0};
    case Value::Kind::kString:
      return static_cast<std::int64_t>(pystr::length(v.as_string()));
    case Value::Kind::kList:
      return static_cast<std::int64_t>(v.items().size());
    case Value::Kind::kDict:
      if (v.is_dict()) return static_cast<std::int64_t>(v.dict_value().entries.size());
      break;
    default:
      break;
  }
  return make_error(ErrorCode::kInvalidArgument, std::string("object of type '") + v.type_name() + "' has no len()");
}

Result<Value> unary_minus(const Value& v) {
  if (v.is_undefined()) return undefined_error("operand of unary '-'");
  if (v.is_float()) return Value(-v.as_double());
  if (v.is_int() || v.is_bool()) return int_op('-', 0, v.as_int());
  return make_error(ErrorCode::kInvalidArgument, std::string("bad operand type for unary -: '") + v.type_name() + "'");
}

Result<Value> binary_op(std::string_view op, const Value& a, const Value& b) {
  if (op == "~") {
    std::string text = a.str();
    const std::string right = b.str();
    if (text.size() + right.size() > kMaxValueBytes) return too_large("string concatenation", kMaxValueBytes, "bytes");
    return Value(std::move(text += right));
  }
  if (a.is_undefined() || b.is_undefined()) return undefined_error("operand of '" + std::string(op) + "'");
  if (a.is_number() && b.is_number()) return arithmetic(op, a, b);
  if (op == "+") {
    if (a.is_string() && b.is_string()) {
      if (a.as_string().size() + b.as_string().size() > kMaxValueBytes) {
        return too_large("string concatenation", kMaxValueBytes, "bytes");
      }
      return Value(a.as_string() + b.as_string());
    }
    if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
      if (a.items().size() + b.items().size() > kMaxValueItems) {
        return too_large("list concatenation", kMaxValueItems, "items");
      }
      std::vector<Value> out = a.items();
      out.insert(out.end(), b.items().begin(), b.items().end());
      return a.is_tuple() ? Value::tuple(std::move(out)) : Value::list(std::move(out));
    }
  }
  if (op == "*") {
    if ((a.is_string() || a.is_list()) && (b.is_int() || b.is_bool())) return repeat(a, b.as_int());
    if ((b.is_string() || b.is_list()) && (a.is_int() || a.is_bool())) return repeat(b, a.as_int());
  }
  if (op == "%" && a.is_string())
    return make_error(ErrorCode::kUnsupported, "unsupported construct '%' string formatting");
  return type_error(op, a, b);
}

Result<bool> contains(const Value& haystack, const Value& needle) {
  if (haystack.is_string()) {
    if (!needle.is_string()) {
      return make_error(ErrorCode::kInvalidArgument,
                        std::string("'in <string>' requires string as left operand, not ") + needle.type_name());
    }
    return haystack.as_string().find(needle.as_string()) != std::string::npos;
  }
  if (haystack.is_list()) {
    for (const auto& item : haystack.items()) {
      if (equals(item, needle)) return true;
    }
    return false;
  }
  if (haystack.is_dict()) return haystack.dict_value().find(needle) != nullptr;
  if (haystack.is_undefined()) return false;
  return make_error(ErrorCode::kInvalidArgument,
                    std::string("argument of type '") + haystack.type_name() + "' is not iterable");
}

Result<bool> compare(std::string_view op, const Value& a, const Value& b) {
  if (op == "==") return equals(a, b);
  if (op == "!=") return !equals(a, b);
  if (op == "in") return contains(b, a);
  if (op == "notin") {
    HEARTH_ASSIGN_OR_RETURN(bool in, contains(b, a));
    return !in;
  }
  if (a.is_undefined() || b.is_undefined()) return undefined_error("operand of '" + std::string(op) + "'");
  if (op == "<") return less_than(a, b);
  if (op == ">") return less_than(b, a);
  if (op == "<=") {
    HEARTH_ASSIGN_OR_RETURN(bool gt, less_than(b, a));
    return !gt;
  }
  HEARTH_ASSIGN_OR_RETURN(bool lt, less_than(a, b));  // ">="
  return !lt;
}

}  // namespace hearth::jinja
