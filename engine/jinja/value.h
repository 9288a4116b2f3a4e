// The value type of the chat-template interpreter: what Python's jinja2 sees
// when transformers renders a chat template (None, bool, int, float, str,
// list, tuple, dict with insertion order, callables, namespace()), plus
// jinja2's default Undefined.
//
// Lists, dicts and namespaces are shared by reference (as in Python). Templates
// cannot mutate lists or dicts (the sandbox is immutable); only a namespace's
// attributes change, through `{% set ns.attr = ... %}`. Builders (push_back,
// set) are for constructing inputs before a render.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "hearth/result.h"

namespace hearth::jinja {

class Value;

// Arguments of a call: positional, then keyword in source order.
struct CallArgs {
  std::vector<Value> args;
  std::vector<std::pair<std::string, Value>> kwargs;

  const Value* kwarg(std::string_view name) const;
};

using NativeFunction = std::function<Result<Value>(const CallArgs&)>;

struct Callable {
  std::string name;  // for messages and str()
  NativeFunction fn;
};

// Containers record how deep they nest (1 + the deepest child; scalars are 0)
// and whether a namespace is inside them, so that a render can refuse values
// nested deeper than its budget and namespace cycles without walking them.
// Destruction is iterative: a list nested 200,000 deep frees without recursion.
struct List {
  std::vector<Value> items;
  bool is_tuple = false;  // prints as (a, b); otherwise behaves like a list
  std::uint32_t depth = 1;
  bool holds_namespace = false;

  List(std::vector<Value> v, bool tuple);
  ~List();
  List(const List&) = delete;
  List& operator=(const List&) = delete;
};

// Insertion-ordered mapping. Lookups are linear: chat dicts hold a handful of keys.
struct Dict {
  std::vector<std::pair<Value, Value>> entries;
  bool is_namespace = false;  // a jinja2 namespace(): attributes, not a mapping
  std::uint32_t depth = 1;    // as List's; only grows when an entry is replaced
  bool holds_namespace = false;

  Dict() = default;
  ~Dict();
  Dict(const Dict&) = delete;
  Dict& operator=(const Dict&) = delete;

  const Value* find(const Value& key) const;
  const Value* find(std::string_view key) const;
  void set(Value key, Value value);  // replaces in place or appends
};

class Value {
 public:
  enum class Kind : std::uint8_t { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict, kCallable };

  Value() = default;                                     // undefined
  Value(bool b) : data_(b) {}                            // NOLINT: implicit by design
  Value(int i) : data_(static_cast<std::int64_t>(i)) {}  // NOLINT
  Value(std::int64_t i) : data_(i) {}                    // NOLINT
  Value(double d) : data_(d) {}                          // NOLINT
  Value(std::string s) : data_(std::move(s)) {}          // NOLINT
  Value(std::string_view s) : data_(std::string(s)) {}   // NOLINT
  Value(const char* s) : data_(std::string(s)) {}        // NOLINT

  static Value none() {
    Value v;
    v.data_ = NoneTag{};
    return v;
  }
  static Value list(std::vector<Value> items = {});
  static Value tuple(std::vector<Value> items);
  static Value dict();
  static Value dict(std::vector<std::pair<std::string, Value>> entries);
  static Value namespace_object();
  static Value function(std::string name, NativeFunction fn);

  Kind kind() const { return static_cast<Kind>(data_.index()); }
  bool is_undefined() const { return kind() == Kind::kUndefined; }
  bool is_none() const { return kind() == Kind::kNone; }
  bool is_bool() const { return kind() == Kind::kBool; }
  bool is_int() const { return kind() == Kind::kInt; }
  bool is_float() const { return kind() == Kind::kFloat; }
  bool is_number() const { return is_int() || is_float() || is_bool(); }
  bool is_string() const { return kind() == Kind::kString; }
  bool is_list() const { return kind() == Kind::kList; }  // list or tuple
  bool is_tuple() const { return is_list() && list_ptr()->is_tuple; }
  bool is_dict() const { return kind() == Kind::kDict && !dict_ptr()->is_namespace; }
  bool is_namespace() const { return kind() == Kind::kDict && dict_ptr()->is_namespace; }
  bool is_callable() const { return kind() == Kind::kCallable; }

  bool as_bool() const { return std::get<bool>(data_); }
  std::int64_t as_int() const;  // bool or int
  double as_double() const;     // bool, int or float
  const std::string& as_string() const { return std::get<std::string>(data_); }
  const std::vector<Value>& items() const { return list_ptr()->items; }
  const Dict& dict_value() const { return *dict_ptr(); }
  const Callable& callable() const { return *std::get<std::shared_ptr<Callable>>(data_); }

  // Builders: append to a list, set a key of a dict (or a namespace attribute).
  void push_back(Value v);
  void set(Value key, Value v);
  // Shorthand lookup in a dict; nullptr when absent or not a dict.
  const Value* get(std::string_view key) const;

  // Container nesting: 0 for scalars, 1 for a list of scalars, ...
  std::uint32_t depth() const;
  // True for a namespace and for a container with a namespace somewhere inside.
  bool holds_namespace() const;
  // Moves the children of a container this Value alone owns into `out`, so a
  // caller can free a deep value with a worklist instead of recursion.
  void release_children(std::vector<Value>& out);
  // Moves a dict's or namespace's entries (keys and values) into `out`, however
  // many others hold it: how a render breaks namespace cycles when it ends.
  void take_entries(std::vector<Value>& out);

  bool truthy() const;            // Python bool(); undefined is false
  std::string str() const;        // Python str(); undefined prints as ""
  std::string repr() const;       // Python repr(), used inside containers
  const char* type_name() const;  // "str", "int", "dict", ... for messages

 private:
  struct NoneTag {};
  using Data = std::variant<std::monostate, NoneTag, bool, std::int64_t, double, std::string, std::shared_ptr<List>,
                            std::shared_ptr<Dict>, std::shared_ptr<Callable>>;

  const std::shared_ptr<List>& list_ptr() const { return std::get<std::shared_ptr<List>>(data_); }
  const std::shared_ptr<Dict>& dict_ptr() const { return std::get<std::shared_ptr<Dict>>(data_); }

  Data data_;
};

// Python ==, with 1 == 1.0 == True; containers compare deeply.
bool equals(const Value& a, const Value& b);

// The largest string or container (bytes / items) any operation builds; an
// operation that would exceed it is an error, before it allocates.
constexpr std::size_t kMaxValueBytes = 32u << 20;
constexpr std::size_t kMaxValueItems = 1'000'000;

// Python <, for numbers, strings (code point order) and lists; an error
// naming both types otherwise.
Result<bool> less_than(const Value& a, const Value& b);

// repr() of a float as Python prints it: shortest round-trip digits,
// "1.0", "1e+16", "1.5e-05", "inf", "nan".
std::string python_float_repr(double d);

}  // namespace hearth::jinja
