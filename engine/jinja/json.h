// JSON in and out of chat Values, matching Python's json module: to_json is
// json.dumps as transformers' `tojson` filter calls it (ensure_ascii=False),
// parse_json is json.loads (objects keep their key order).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "engine/jinja/value.h"
#include "hearth/result.h"

namespace hearth::jinja {

struct JsonDumpOptions {
  std::optional<std::string> indent;  // none: one line; else the text repeated per level
  std::string item_separator = ", ";  // json.dumps defaults: ", " / ": " (", " becomes "," with an indent)
  std::string key_separator = ": ";
  bool sort_keys = false;
  bool ensure_ascii = false;  // escape every non-ASCII code point as \uXXXX
};

// json.dumps; an error for values JSON cannot hold (undefined, functions, namespaces).
Result<std::string> to_json(const Value& value, const JsonDumpOptions& options = {});

// json.loads of a complete document; numbers without '.', 'e' become ints (int64).
Result<Value> parse_json(std::string_view text);

}  // namespace hearth::jinja
