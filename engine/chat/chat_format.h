// Which chat format a model's conversations are rendered in: the GGUF's own
// `tokenizer.chat_template` when it has a usable one, else a documented
// fallback, named so the log, the app and `hearth-cli template` can say which
// (and all three render the same text):
// - "gemma-turns" for vocabularies with Gemma's turn tokens (<start_of_turn>,
//   <end_of_turn>; Gemma 3 270M is a base model whose file has no template):
//     bos_token, then per message "<start_of_turn>" + role + "\n" + content
//     (trimmed) + "<end_of_turn>\n" with the assistant's role written
//     "model" and a system message's text put at the head of the first user
//     turn (Gemma has no system role), then "<start_of_turn>model\n";
// - "chatml" otherwise (chat_template.h's render_fallback).
#pragma once

#include <string>
#include <string_view>

#include "hearth/result.h"

namespace hearth::chat {

struct ChatFormat {
  std::string name;       // "the model's template", "gemma-turns" or "chatml"
  std::string source;     // Jinja source to render; "" for chatml (render_fallback)
  bool fallback = false;  // not the file's own template
  std::string reason;     // why the fallback: "the model has no chat template", or the parse error
  // For messages: "the model's template", or "fallback gemma-turns (the model has no chat template)".
  std::string describe() const;
};

// has_gemma_turns: the vocabulary holds <start_of_turn> and <end_of_turn>.
ChatFormat choose_chat_format(std::string_view file_template, bool has_gemma_turns);

}  // namespace hearth::chat
