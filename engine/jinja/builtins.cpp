#include "engine/jinja/builtins.h"

#include <cstdint>
#include <ctime>

namespace hearth::jinja {
namespace {

constexpr std::int64_t kMaxRange = 100000;  // jinja2's sandbox MAX_RANGE

}  // namespace

Result<Value> make_range(const CallArgs& a) {
  std::int64_t bounds[3] = {0, 0, 1};
  const std::size_t n = a.args.size();
  if (n < 1 || n > 3) return make_error(ErrorCode::kInvalidArgument, "range expects 1 to 3 integers");
  for (std::size_t i = 0; i < n; ++i) {
    if (!a.args[i].is_int() && !a.args[i].is_bool())
      return make_error(ErrorCode::kInvalidArgument, "range expects integers");
  }
  if (n == 1) {
    bounds[1] = a.args[0].as_int();
  } else {
    bounds[0] = a.args[0].as_int();
    bounds[1] = a.args[1].as_int();
    if (n == 3) bounds[2] = a.args[2].as_int();
  }
  if (bounds[2] == 0) return make_error(ErrorCode::kInvalidArgument, "range() arg 3 must not be zero");
  std::vector<Value> out;
  for (std::int64_t i = bounds[0]; bounds[2] > 0 ? i < bounds[1] : i > bounds[1];) {
    if (static_cast<std::int64_t>(out.size()) >= kMaxRange) {
      return make_error(ErrorCode::kInvalidArgument, "range too big (more than 100000 items)");
    }
    out.emplace_back(i);
    if (__builtin_add_overflow(i, bounds[2], &i)) break;  // the next item would pass the int64 range
  }
  return Value::list(std::move(out));
}

Result<Value> make_namespace(const CallArgs& a, std::vector<Value>& made) {
  Value ns = Value::namespace_object();
  for (const auto& arg : a.args) {
    if (!arg.is_dict()) return make_error(ErrorCode::kInvalidArgument, "namespace() takes a mapping or keywords");
    for (const auto& [k, v] : arg.dict_value().entries) ns.set(k, v);
  }
  for (const auto& [k, v] : a.kwargs) ns.set(Value(k), v);
  made.push_back(ns);
  return ns;
}

Result<Value> strftime_now(const CallArgs& a) {
  if (a.args.empty() || !a.args[0].is_string())
    return make_error(ErrorCode::kInvalidArgument, "strftime_now expects a format string");
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[512];
  const std::size_t n = std::strftime(buf, sizeof(buf), a.args[0].as_string().c_str(), &tm);
  return Value(std::string(buf, n));
}

}  // namespace hearth::jinja
