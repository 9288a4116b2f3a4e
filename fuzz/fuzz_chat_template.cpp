// libFuzzer harness for the chat template interpreter: the input is template
// text; it is parsed and, when it parses, rendered with fixed messages (with
// and without a system turn and generation prompt). Errors are fine (they are
// values); crashes, sanitizer reports, hangs and runaway memory are not. The
// render limits are lowered so that a loop of a million steps stays fast, and
// a render that reaches one ends the input (the next would reach it again).
// Seeds: the real templates in tests/engine/chat/templates/ and the hostile
// cases of issue 14 in fuzz/seeds/chat_template/; dictionary fuzz/jinja.dict;
// mutations that keep the template structure in jinja_mutator.cpp.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/chat/chat_template.h"

namespace {

using namespace hearth::chat;

void require(bool ok) {
  if (!ok) __builtin_trap();
}

const TemplateInputs& inputs(bool system, bool generation_prompt) {
  static const auto make = [](bool sys, bool gen) {
    TemplateInputs in;
    if (sys) in.messages.push_back({"system", "You are terse.", Value::dict()});
    in.messages.push_back({"user", "Hi <b>there</b> \xC3\xA9\xF0\x9F\x98\x80", Value::dict()});
    in.messages.push_back({"assistant", "Hello!\n", Value::dict()});
    in.messages.push_back({"user", "{{ not a template }} {% raw %}", Value::dict()});
    in.add_generation_prompt = gen;
    in.bos_token = "<s>";
    in.eos_token = "</s>";
    return in;
  };
  static const TemplateInputs all[4] = {make(false, false), make(false, true), make(true, false), make(true, true)};
  return all[(system ? 2 : 0) + (generation_prompt ? 1 : 0)];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view source(reinterpret_cast<const char*>(data), size);
  // Lower than the defaults so each input stays well inside libFuzzer's
  // -timeout and -rss_limit_mb: 4 renders of at most 2 s and 2 MiB built (a
  // list built by doubling copies every item: under the coverage build a
  // value copy costs ~30 us, so the product's 1 GiB budget would take minutes;
  // the product's limits themselves are tested in tests/engine/jinja/).
  const RenderLimits limits{.max_output_bytes = 1u << 20,
                            .max_loop_iterations = 20'000,
                            .max_call_depth = 32,
                            .max_steps = 2'000'000,
                            .max_depth = 500,
                            .max_value_depth = 512,
                            .max_allocated_bytes = 2u << 20,
                            .deadline = std::chrono::milliseconds(2000)};
  auto parsed = ChatTemplate::parse(source, limits);
  if (!parsed) {
    require(!parsed.error().message.empty());
    return 0;
  }
  for (int k = 0; k < 4; ++k) {
    auto out = parsed->render(inputs(k >= 2, (k & 1) != 0));
    if (out) {
      require(out->size() <= limits.max_output_bytes);
    } else if (out.error().code == hearth::ErrorCode::kOutOfMemory) {
      // A limit was reached (steps, bytes, depth, deadline): the other
      // messages would mostly reach it again, at the same cost.
      break;
    }
  }
  return 0;
}
