// jinja2's tests: `x is defined`, `x is string`, `x is equalto y`, ...
#include <algorithm>
#include <array>

#include "engine/jinja/filters.h"
#include "engine/jinja/operations.h"
#include "engine/jinja/pystr.h"

namespace hearth::jinja {
namespace {

constexpr std::array<std::string_view, 37> kTests = {
    "boolean", "callable", "defined", "divisibleby", "eq",        "equalto", "even",     "false",
    "float",   "ge",       "gt",      "greaterthan", "in",        "integer", "iterable", "le",
    "lower",   "lessthan", "lt",      "mapping",     "ne",        "none",    "number",   "odd",
    "sameas",  "sequence", "string",  "true",        "undefined", "upper",   "==",       "!=",
    "<",       "<=",       ">",       ">=",          "escaped"};

Result<const Value*> operand(const CallArgs& a, std::string_view test) {
  if (a.args.empty())
    return make_error(ErrorCode::kInvalidArgument, "test '" + std::string(test) + "' needs an argument");
  return &a.args[0];
}

Result<bool> comparison_test(std::string_view name, const Value& v, const Value& other) {
  if (name == "eq" || name == "equalto" || name == "==") return compare("==", v, other);
  if (name == "ne" || name == "!=") return compare("!=", v, other);
  if (name == "lt" || name == "lessthan" || name == "<") return compare("<", v, other);
  if (name == "le" || name == "<=") return compare("<=", v, other);
  if (name == "gt" || name == "greaterthan" || name == ">") return compare(">", v, other);
  if (name == "ge" || name == ">=") return compare(">=", v, other);
  if (name == "in") return contains(other, v);
  // "sameas": Python `is`, meaningful for None, booleans and shared containers.
  if (v.kind() != other.kind()) return false;
  return equals(v, other) && (v.is_none() || v.is_bool() || v.is_undefined() || !v.is_list());
}

}  // namespace

bool is_known_test(std::string_view name) {
  return std::find(kTests.begin(), kTests.end(), name) != kTests.end();
}

Result<bool> apply_test(std::string_view name, const Value& v, const CallArgs& args) {
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "boolean") return v.is_bool();
  if (name == "true") return v.is_bool() && v.as_bool();
  if (name == "false") return v.is_bool() && !v.as_bool();
  if (name == "integer") return v.is_int();
  if (name == "float") return v.is_float();
  if (name == "number") return v.is_number();
  if (name == "string") return v.is_string();
  if (name == "mapping") return v.is_dict();
  if (name == "callable") return v.is_callable();
  if (name == "escaped") return false;
  // Undefined iterates (as empty) and has a length in jinja2, so it is both.
  if (name == "iterable") return v.is_undefined() || v.is_list() || v.is_string() || v.is_dict();
  if (name == "sequence") return v.is_undefined() || v.is_list() || v.is_string() || v.is_dict();
  if (name == "lower" || name == "upper") {
    const std::string s = v.str();
    const bool cased = pystr::upper(s) != pystr::lower(s);
    return cased && (name == "upper" ? pystr::upper(s) == s : pystr::lower(s) == s);
  }
  if (name == "odd" || name == "even" || name == "divisibleby") {
    if (!(v.is_int() || v.is_bool()))
      return make_error(ErrorCode::kInvalidArgument, "test '" + std::string(name) + "' needs an integer");
    std::int64_t d = 2;
    if (name == "divisibleby") {
      HEARTH_ASSIGN_OR_RETURN(const Value* o, operand(args, name));
      if (!(o->is_int() || o->is_bool()) || o->as_int() == 0)
        return make_error(ErrorCode::kInvalidArgument, "divisibleby needs a non-zero integer");
      d = o->as_int();
    }
    const std::int64_t r = ((v.as_int() % d) + d) % d;
    return name == "odd" ? r == 1 : r == 0;
  }
  HEARTH_ASSIGN_OR_RETURN(const Value* other, operand(args, name));
  return comparison_test(name, v, *other);
}

}  // namespace hearth::jinja
