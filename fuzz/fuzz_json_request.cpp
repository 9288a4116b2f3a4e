// libFuzzer harness for the JSON a chat request arrives in (hearth-cli
// template --messages today, the HTTP server's request bodies next): the
// input is parsed as template inputs (chat::inputs_from_json), and when it
// parses, its messages and tools are serialized back with tojson and through a
// small template, as a server renders a prompt. Errors are values; crashes,
// sanitizer reports, stack overflows on deep nesting and hangs are not.
// Seeds: fuzz/seeds/json_request/.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/chat/chat_template.h"
#include "engine/jinja/json.h"

namespace {

using namespace hearth;

void require(bool ok) {
  if (!ok) __builtin_trap();
}

const chat::ChatTemplate& echo_template() {
  static const chat::ChatTemplate t =
      chat::ChatTemplate::parse(
          "{% for m in messages %}{{ m.role }}: {{ m.content }}|{{ m | tojson }}\n{% endfor %}{{ tools | tojson }}")
          .value();
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto inputs = chat::inputs_from_json(text);
  if (!inputs) {
    require(!inputs.error().message.empty());
    return 0;
  }
  auto rendered = echo_template().render(*inputs);
  if (!rendered) require(!rendered.error().message.empty());
  // The whole document round-trips through the JSON writer as well.
  if (auto doc = jinja::parse_json(text)) {
    auto again = jinja::to_json(*doc);
    if (again) require(jinja::parse_json(*again).ok());
  }
  return 0;
}
