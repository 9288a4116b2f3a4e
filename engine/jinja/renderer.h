// Executes a parsed template against a dict of variables, with jinja2's
// scoping: a for loop's body has its own scope (a `set` inside it does not
// leak out, hence templates use namespace()), `if` does not, and macros see
// the template's top-level variables and their own arguments.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/jinja/ast.h"
#include "engine/jinja/value.h"
#include "hearth/result.h"

namespace hearth::jinja {

// One budget per render: a chat template comes from a model file and is an
// untrusted program, so everything that can grow is bounded. A limit hit ends
// the render with an error (code kOutOfMemory: the render's budget is spent;
// kCancelled for `cancel`) that names the limit and the template line.
struct RenderLimits {
  std::size_t max_output_bytes = 16u << 20;
  std::size_t max_loop_iterations = 1'000'000;  // summed over all loops of one render
  int max_call_depth = 64;                      // nested macro calls
  std::uint64_t max_steps = 20'000'000;         // expressions evaluated + statements run
  int max_depth = 500;                          // nested evaluation (statements, expressions, calls): the C stack
  std::uint32_t max_value_depth = 512;          // nesting of lists / dicts a render builds
  std::size_t max_allocated_bytes = 1u << 30;   // bytes of the strings and containers built, summed
  std::chrono::milliseconds deadline{5000};     // wall clock of one render
  const std::atomic<bool>* cancel = nullptr;    // set from another thread: the render stops soon after
};

// `variables` is a dict (messages, add_generation_prompt, ...); `source` is the
// normalized template source, used to name positions in error messages.
// Errors from raise_exception() carry the template's message unchanged.
Result<std::string> render_template(const Body& body, const Value& variables, std::string_view source,
                                    const RenderLimits& limits = {});

}  // namespace hearth::jinja
