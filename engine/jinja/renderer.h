// Executes a parsed template against a dict of variables, with jinja2's
// scoping: a for loop's body has its own scope (a `set` inside it does not
// leak out, hence templates use namespace()), `if` does not, and macros see
// the template's top-level variables and their own arguments.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "engine/jinja/ast.h"
#include "engine/jinja/value.h"
#include "hearth/result.h"

namespace hearth::jinja {

// Bounds that keep a hostile template from running away; exceeding one is an error.
struct RenderLimits {
  std::size_t max_output_bytes = 16u << 20;
  std::size_t max_loop_iterations = 1'000'000;  // summed over all loops of one render
  int max_call_depth = 64;                      // nested macro calls
};

// `variables` is a dict (messages, add_generation_prompt, ...); `source` is the
// normalized template source, used to name positions in error messages.
// Errors from raise_exception() carry the template's message unchanged.
Result<std::string> render_template(const Body& body, const Value& variables, std::string_view source,
                                    const RenderLimits& limits = {});

}  // namespace hearth::jinja
