// Reading an untrusted JSON body: a nesting-depth check before the parser
// (nlohmann's parser is iterative, but destroying a deep value recurses), the
// parse itself with the error as a value, and typed accessors for the fields
// of an object that name the field's path in every error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "server/api_error.h"

namespace hearth::server {

using Json = nlohmann::json;

// The deepest nesting of arrays and objects in `text`, counted outside string
// literals; stops counting (and returns max_depth + 1) once it passes max_depth.
int json_depth(std::string_view text, int max_depth);

// Parses `body` as one JSON object: 400 for malformed JSON, nesting deeper than
// `max_depth`, or a value that is not an object.
ApiResult<Json> parse_object(std::string_view body, int max_depth);

// A short, printable rendering of a value for an error message.
std::string describe_value(const Json& value);

// Typed, range-checked access to the members of one JSON object. Absent and
// null members read as "not given" (std::nullopt): OpenAI's clients send null
// for parameters they leave unset.
class Fields {
 public:
  Fields(const Json& object, std::string path) : object_(object), path_(std::move(path)) {}

  // The member or nullptr when it is absent or null.
  const Json* find(std::string_view name) const;
  // "messages[1].content" style path of a member.
  std::string path_of(std::string_view name) const;

  ApiResult<std::optional<double>> number(std::string_view name, double lo, double hi) const;
  ApiResult<std::optional<std::int64_t>> integer(std::string_view name, std::int64_t lo, std::int64_t hi) const;
  ApiResult<std::optional<bool>> boolean(std::string_view name) const;
  ApiResult<std::optional<std::string>> string(std::string_view name) const;
  // A member that must be given: 400 missing_required_parameter otherwise.
  ApiResult<const Json*> required(std::string_view name) const;

  // 400 invalid_type for member `name` (or any path) that should have been `what`.
  ApiError wrong_type(const std::string& path, const Json& value, std::string_view what) const;

 private:
  const Json& object_;
  std::string path_;
};

}  // namespace hearth::server
