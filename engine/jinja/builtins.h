// The global functions a chat template can call (jinja2's range, namespace,
// dict, plus transformers' strftime_now); raise_exception lives in the
// renderer, which must tell its message apart from the interpreter's.
#pragma once

#include <vector>

#include "engine/jinja/value.h"
#include "hearth/result.h"

namespace hearth::jinja {

// range(stop) / range(start, stop[, step]): at most 100,000 items (jinja2's sandbox MAX_RANGE).
Result<Value> make_range(const CallArgs& a);
// namespace(mapping or keywords); the new namespace is also appended to
// `made` (the render clears them all at its end: see Renderer::break_cycles).
Result<Value> make_namespace(const CallArgs& a, std::vector<Value>& made);
// strftime_now(format): the local time.
Result<Value> strftime_now(const CallArgs& a);

}  // namespace hearth::jinja
