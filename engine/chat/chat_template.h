// Chat templates: renders a model's `tokenizer.chat_template` (a Jinja
// template) exactly as HF transformers does with Python jinja2 (sandboxed,
// trim_blocks and lstrip_blocks on, loop controls, `raise_exception`,
// `strftime_now`, and a `tojson` that keeps non-ASCII text as is).
//
// Parse once, render many times: a ChatTemplate is immutable after parse()
// and render() may run concurrently from several threads.
//
// Variables a render sees, as transformers passes them: `messages` (a list of
// dicts: role, content, then each entry of ChatMessage::extra), `tools` and
// `documents` (None unless given), `add_generation_prompt`, `bos_token`,
// `eos_token`, then every entry of TemplateInputs::variables (which may
// override any of the above).
//
// The generic fallback format (render_fallback), used when a model has no
// template or its template cannot be parsed or rendered, is ChatML:
//   for each message: "<|im_start|>" + role + "\n" + content + "<|im_end|>\n"
//   then, with add_generation_prompt: "<|im_start|>assistant\n"
// (bos_token is not added; the tokenizer adds BOS when the model asks for it).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/jinja/renderer.h"
#include "engine/jinja/value.h"
#include "hearth/result.h"

namespace hearth::chat {

// The interpreter (engine/jinja/) is the chat API's vocabulary for values and limits.
using jinja::RenderLimits;
using jinja::Value;

struct ChatMessage {
  std::string role;
  std::string content;
  // More fields of the message dict (tool_calls, name, tool_call_id, ...), in
  // order after role and content; an entry named "content" replaces the string
  // above (e.g. None for an assistant turn that only calls tools).
  Value extra = Value::dict();
};

struct TemplateInputs {
  std::vector<ChatMessage> messages;
  bool add_generation_prompt = false;
  std::string bos_token;
  std::string eos_token;
  Value tools;                      // undefined: passed as None; else a list of tool schemas
  Value variables = Value::dict();  // more variables (date_string, enable_thinking, ...)
};

// Reads inputs from JSON: {"messages": [{"role", "content", ...}], "add_generation_prompt",
// "bos_token", "eos_token", "tools", any other key: a variable}.
Result<TemplateInputs> inputs_from_json(std::string_view json);

// The dict of variables a render of `inputs` sees (see the header comment).
Value template_variables(const TemplateInputs& inputs);

class ChatTemplate {
 public:
  // Errors name the construct and its line and column, e.g.
  // "chat template: unsupported tag 'include' at line 3, column 4".
  static Result<ChatTemplate> parse(std::string_view source, const RenderLimits& limits = {});

  // `cancel` (optional) is read while rendering: once another thread sets it,
  // the render ends soon with kCancelled. A limit of RenderLimits hit ends it
  // with kOutOfMemory, naming the limit and the template line.
  Result<std::string> render(const TemplateInputs& inputs, const std::atomic<bool>* cancel = nullptr) const;
  // Renders with an explicit dict of variables (nothing added).
  Result<std::string> render_variables(const Value& variables, const std::atomic<bool>* cancel = nullptr) const;

 private:
  struct Impl;
  explicit ChatTemplate(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

// The ChatML fallback described above.
std::string render_fallback(const TemplateInputs& inputs);

struct RenderedPrompt {
  std::string text;
  bool used_fallback = false;
  std::string fallback_reason;  // the parse or render error, when used_fallback
};

// Renders with the template, or with the fallback when the template is empty,
// fails to parse or fails to render; a fallback is logged as a warning on the
// "chat" logger with its reason.
RenderedPrompt render_or_fallback(std::string_view template_source, const TemplateInputs& inputs);

}  // namespace hearth::chat
