#include "server/json_fields.h"

#include <cmath>
#include <string_view>

namespace hearth::server {

int json_depth(std::string_view text, int max_depth) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  bool escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > deepest) deepest = depth;
      if (deepest > max_depth) return max_depth + 1;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

ApiResult<Json> parse_object(std::string_view body, int max_depth) {
  if (json_depth(body, max_depth) > max_depth) {
    return malformed_json("The JSON body nests arrays and objects deeper than the server's limit of " +
                          std::to_string(max_depth));
  }
  Json doc;
  // nlohmann reports a parse error by exception; it stops here and becomes a value.
  try {
    doc = Json::parse(body);
  } catch (const Json::exception& e) {  // parse_error, or out_of_range for a number like 1e999
    std::string what = e.what();
    if (const auto cut = what.find("] "); cut != std::string::npos) what = what.substr(cut + 2);
    return malformed_json("The body is not valid JSON (" + what + ")");
  }
  if (!doc.is_object()) return malformed_json("The body must be a JSON object, got " + describe_value(doc));
  return doc;
}

std::string describe_value(const Json& value) {
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  constexpr std::size_t kMax = 48;
  if (text.size() > kMax) text = text.substr(0, kMax) + "...";
  return std::string(value.type_name()) + " " + text;
}

const Json* Fields::find(std::string_view name) const {
  const auto it = object_.find(name);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string Fields::path_of(std::string_view name) const {
  return path_.empty() ? std::string(name) : path_ + "." + std::string(name);
}

ApiError Fields::wrong_type(const std::string& path, const Json& value, std::string_view what) const {
  return bad_request(path, "'" + path + "' must be " + std::string(what) + ", got " + describe_value(value),
                     "invalid_type");
}

ApiResult<std::optional<double>> Fields::number(std::string_view name, double lo, double hi) const {
  const Json* v = find(name);
  if (!v) return std::optional<double>{};
  const std::string path = path_of(name);
  if (!v->is_number()) return wrong_type(path, *v, "a number");
  const double x = v->get<double>();
  if (!std::isfinite(x) || x < lo || x > hi) {
    return bad_request(path, "'" + path + "' must be between " + Json(lo).dump() + " and " + Json(hi).dump() +
                                 ", got " + describe_value(*v));
  }
  return std::optional<double>{x};
}

ApiResult<std::optional<std::int64_t>> Fields::integer(std::string_view name, std::int64_t lo, std::int64_t hi) const {
  const Json* v = find(name);
  if (!v) return std::optional<std::int64_t>{};
  const std::string path = path_of(name);
  // 2.0 is accepted as 2 (JavaScript clients have no integer type); 2.5 is not.
  std::int64_t x = 0;
  if (v->is_number_integer()) {
    if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(hi)) {
      return bad_request(path, "'" + path + "' must be at most " + std::to_string(hi) + ", got " + describe_value(*v));
    }
    x = v->get<std::int64_t>();
  } else if (v->is_number_float()) {
    const double d = v->get<double>();
    if (!(std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15)) {
      return wrong_type(path, *v, "an integer");
    }
    x = static_cast<std::int64_t>(d);
  } else {
    return wrong_type(path, *v, "an integer");
  }
  if (x < lo || x > hi) {
    return bad_request(path, "'" + path + "' must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                                 ", got " + std::to_string(x));
  }
  return std::optional<std::int64_t>{x};
}

ApiResult<std::optional<bool>> Fields::boolean(std::string_view name) const {
  const Json* v = find(name);
  if (!v) return std::optional<bool>{};
  if (!v->is_boolean()) return wrong_type(path_of(name), *v, "a boolean");
  return std::optional<bool>{v->get<bool>()};
}

ApiResult<std::optional<std::string>> Fields::string(std::string_view name) const {
  const Json* v = find(name);
  if (!v) return std::optional<std::string>{};
  if (!v->is_string()) return wrong_type(path_of(name), *v, "a string");
  return std::optional<std::string>{v->get<std::string>()};
}

ApiResult<const Json*> Fields::required(std::string_view name) const {
  const Json* v = find(name);
  if (!v) {
    const std::string path = path_of(name);
    return bad_request(path, "Missing required parameter: '" + path + "'", "missing_required_parameter");
  }
  return v;
}

}  // namespace hearth::server
