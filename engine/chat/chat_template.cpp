#include "engine/chat/chat_template.h"

#include "engine/core/log.h"
#include "engine/jinja/ast.h"
#include "engine/jinja/json.h"
#include "engine/jinja/lexer.h"
#include "engine/jinja/parser.h"

namespace hearth::chat {

using namespace jinja;  // the interpreter this file drives

struct ChatTemplate::Impl {
  std::string source;  // normalized
  Body body;
  RenderLimits limits;
};

Result<ChatTemplate> ChatTemplate::parse(std::string_view source, const RenderLimits& limits) {
  auto impl = std::make_shared<Impl>();
  impl->source = normalize_source(source);
  impl->limits = limits;
  HEARTH_ASSIGN_OR_RETURN(std::vector<Token> tokens, tokenize(impl->source));
  HEARTH_ASSIGN_OR_RETURN(impl->body, parse_template(tokens, impl->source));
  return ChatTemplate(std::move(impl));
}

Result<std::string> ChatTemplate::render_variables(const Value& variables, const std::atomic<bool>* cancel) const {
  if (!variables.is_dict()) return make_error(ErrorCode::kInvalidArgument, "chat template: variables must be a dict");
  RenderLimits limits = impl_->limits;
  if (cancel != nullptr) limits.cancel = cancel;
  return render_template(impl_->body, variables, impl_->source, limits);
}

Result<std::string> ChatTemplate::render(const TemplateInputs& inputs, const std::atomic<bool>* cancel) const {
  return render_variables(template_variables(inputs), cancel);
}

Value template_variables(const TemplateInputs& inputs) {
  Value messages = Value::list();
  for (const auto& m : inputs.messages) {
    Value d = Value::dict({{"role", Value(m.role)}, {"content", Value(m.content)}});
    if (m.extra.is_dict()) {
      for (const auto& [k, v] : m.extra.dict_value().entries) d.set(k, v);
    }
    messages.push_back(std::move(d));
  }
  Value vars = Value::dict({{"messages", messages},
                            {"tools", inputs.tools.is_undefined() ? Value::none() : inputs.tools},
                            {"documents", Value::none()},
                            {"add_generation_prompt", Value(inputs.add_generation_prompt)},
                            {"bos_token", Value(inputs.bos_token)},
                            {"eos_token", Value(inputs.eos_token)}});
  if (inputs.variables.is_dict()) {
    for (const auto& [k, v] : inputs.variables.dict_value().entries) vars.set(k, v);
  }
  return vars;
}

namespace {

Result<ChatMessage> message_from_value(const Value& m, std::size_t index) {
  const std::string where = "messages[" + std::to_string(index) + "]";
  if (!m.is_dict()) return make_error(ErrorCode::kInvalidArgument, where + " is not an object");
  ChatMessage msg;
  const Value* role = m.get("role");
  if (role == nullptr || !role->is_string())
    return make_error(ErrorCode::kInvalidArgument, where + ".role must be a string");
  msg.role = role->as_string();
  for (const auto& [k, v] : m.dict_value().entries) {
    const bool is_content = k.is_string() && k.as_string() == "content";
    if (k.is_string() && k.as_string() == "role") continue;
    if (is_content && v.is_string()) {
      msg.content = v.as_string();
    } else {
      msg.extra.set(k, v);
    }
  }
  return msg;
}

}  // namespace

Result<TemplateInputs> inputs_from_json(std::string_view json) {
  HEARTH_ASSIGN_OR_RETURN(Value doc, parse_json(json));
  if (!doc.is_dict()) return make_error(ErrorCode::kInvalidArgument, "template inputs: top level must be an object");
  TemplateInputs in;
  for (const auto& [k, v] : doc.dict_value().entries) {
    const std::string key = k.str();
    if (key == "messages") {
      if (!v.is_list()) return make_error(ErrorCode::kInvalidArgument, "template inputs: messages must be an array");
      for (std::size_t i = 0; i < v.items().size(); ++i) {
        HEARTH_ASSIGN_OR_RETURN(ChatMessage m, message_from_value(v.items()[i], i));
        in.messages.push_back(std::move(m));
      }
    } else if (key == "add_generation_prompt" && v.is_bool()) {
      in.add_generation_prompt = v.as_bool();
    } else if ((key == "bos_token" || key == "eos_token") && v.is_string()) {
      (key == "bos_token" ? in.bos_token : in.eos_token) = v.as_string();
    } else if (key == "tools") {
      in.tools = v;
    } else {
      in.variables.set(k, v);
    }
  }
  return in;
}

std::string render_fallback(const TemplateInputs& inputs) {
  std::string out;
  for (const auto& m : inputs.messages) {
    const Value* content = m.extra.get("content");
    out += "<|im_start|>" + m.role + "\n" + (content != nullptr ? content->str() : m.content) + "<|im_end|>\n";
  }
  if (inputs.add_generation_prompt) out += "<|im_start|>assistant\n";
  return out;
}

RenderedPrompt render_or_fallback(std::string_view template_source, const TemplateInputs& inputs) {
  RenderedPrompt out;
  if (template_source.empty()) {
    out.fallback_reason = "the model has no chat template";
  } else if (auto tpl = ChatTemplate::parse(template_source); !tpl) {
    out.fallback_reason = tpl.error().message;
  } else if (auto text = tpl->render(inputs); !text) {
    out.fallback_reason = text.error().message;
  } else {
    out.text = std::move(text).value();
    return out;
  }
  out.used_fallback = true;
  out.text = render_fallback(inputs);
  log::get("chat")->warn("chat template not used, falling back to the generic ChatML format: {}", out.fallback_reason);
  return out;
}

}  // namespace hearth::chat
