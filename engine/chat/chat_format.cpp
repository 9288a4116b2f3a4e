#include "engine/chat/chat_format.h"

#include "engine/chat/chat_template.h"

namespace hearth::chat {
namespace {

// The gemma-turns fallback (see the header), in the Jinja subset chat_template.h renders.
constexpr const char* kGemmaTurns =
    "{{ bos_token }}"
    "{% if messages and messages[0]['role'] == 'system' %}"
    "{% set head = messages[0]['content'] | trim + '\n\n' %}{% set turns = messages[1:] %}"
    "{% else %}{% set head = '' %}{% set turns = messages %}{% endif %}"
    "{% for m in turns %}"
    "{{ '<start_of_turn>' + ('model' if m['role'] == 'assistant' else m['role']) + '\n' }}"
    "{{ (head if loop.first else '') + m['content'] | trim }}{{ '<end_of_turn>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<start_of_turn>model\n' }}{% endif %}";

}  // namespace

std::string ChatFormat::describe() const {
  return fallback ? "fallback " + name + " (" + reason + ")" : name;
}

ChatFormat choose_chat_format(std::string_view file_template, bool has_gemma_turns) {
  ChatFormat f;
  if (!file_template.empty()) {
    auto parsed = ChatTemplate::parse(file_template);
    if (parsed) {
      f.name = "the model's template";
      f.source = std::string(file_template);
      return f;
    }
    f.reason = "its chat template is unusable: " + parsed.error().message;
  } else {
    f.reason = "the model has no chat template";
  }
  f.fallback = true;
  f.name = has_gemma_turns ? "gemma-turns" : "chatml";
  if (has_gemma_turns) f.source = kGemmaTurns;
  return f;
}

}  // namespace hearth::chat
