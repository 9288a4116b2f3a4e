// jinja2's built-in filters (`x | name(args)`) and tests (`x is name(args)`)
// that chat templates use, plus transformers' `tojson` (ensure_ascii=False,
// indent, separators, sort_keys). Names outside the supported set are
// rejected when the template is parsed.
#pragma once

#include <string_view>

#include "engine/jinja/value.h"
#include "hearth/result.h"

namespace hearth::jinja {

bool is_known_filter(std::string_view name);
bool is_known_test(std::string_view name);

// `args` excludes the input value.
Result<Value> apply_filter(std::string_view name, const Value& input, const CallArgs& args);
Result<bool> apply_test(std::string_view name, const Value& input, const CallArgs& args);

}  // namespace hearth::jinja
