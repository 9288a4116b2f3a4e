// The operations jinja2 performs on values while rendering, with the
// semantics of Python under jinja2's ImmutableSandboxedEnvironment and its
// default Undefined: attribute and item lookup (`a.b` tries the attribute,
// then the key; `a['b']` the other way round), iteration, arithmetic and
// membership, and the str/dict methods templates call.
#pragma once

#include <string_view>
#include <vector>

#include "engine/jinja/value.h"
#include "hearth/result.h"

namespace hearth::jinja {

Result<Value> get_attr(const Value& obj, std::string_view name);
Result<Value> get_item(const Value& obj, const Value& key);
// obj[start:stop:step]; undefined bounds are omitted ones.
Result<Value> get_slice(const Value& obj, const Value& start, const Value& stop, const Value& step);

// The elements a for loop visits: list items, dict keys, string characters;
// undefined iterates as empty.
Result<std::vector<Value>> iterate(const Value& v);

// + - * / // % ** and ~ (string concatenation).
Result<Value> binary_op(std::string_view op, const Value& a, const Value& b);
Result<Value> unary_minus(const Value& v);
Result<bool> contains(const Value& haystack, const Value& needle);          // `needle in haystack`
Result<bool> compare(std::string_view op, const Value& a, const Value& b);  // == != < <= > >= in notin

// Python len(); undefined has length 0.
Result<std::int64_t> length_of(const Value& v);

// True when `name` is a method of the receiver's type that templates may call.
bool has_method(const Value& obj, std::string_view name);
Result<Value> call_method(const Value& obj, std::string_view name, const CallArgs& args);

// An error (kOutOfMemory) when a string of `bytes` would pass kMaxValueBytes;
// `what` names the operation. Checked before the string is built.
Result<void> check_value_bytes(std::size_t bytes, std::string_view what);

// str.replace with the result's size checked before it is built.
Result<Value> replace_checked(const std::string& s, const std::string& old_s, const std::string& new_s, long count);

// The error jinja2 raises when an undefined value is used in an operation.
Error undefined_error(std::string_view what);

}  // namespace hearth::jinja
