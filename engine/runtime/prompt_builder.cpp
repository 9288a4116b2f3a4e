#include "engine/runtime/prompt_builder.h"

#include "engine/core/log.h"

namespace hearth::runtime {

PromptBuilder::PromptBuilder(std::shared_ptr<const tokenizer::Vocabulary> vocab, const std::string& chat_template,
                             const chat::RenderLimits& limits)
    : vocab_(std::move(vocab)) {
  if (chat_template.empty()) {
    log::get("engine")->info("the model has no chat template: using the ChatML fallback");
    return;
  }
  Result<chat::ChatTemplate> parsed = chat::ChatTemplate::parse(chat_template, limits);
  if (!parsed) {
    log::get("engine")->warn("chat template unusable ({}): using the ChatML fallback", parsed.error().message);
    return;
  }
  template_ = std::move(parsed).value();
}

Result<std::string> PromptBuilder::render(const std::vector<ChatTurn>& messages, bool add_generation_prompt,
                                          const std::atomic<bool>* cancel) const {
  chat::TemplateInputs in;
  for (const ChatTurn& t : messages) in.messages.push_back({t.role, t.content, chat::Value::dict()});
  in.add_generation_prompt = add_generation_prompt;
  if (auto bos = vocab_->bos()) in.bos_token = vocab_->token_text(*bos);
  if (auto eos = vocab_->eos()) in.eos_token = vocab_->token_text(*eos);
  if (template_) {
    Result<std::string> text = template_->render(in, cancel);
    if (text) return std::move(text).value();
    const ErrorCode code = text.error().code;
    if (code == ErrorCode::kOutOfMemory || code == ErrorCode::kCancelled) return std::move(text).error();
    log::get("engine")->warn("chat template failed to render ({}): using the ChatML fallback", text.error().message);
  }
  return chat::render_fallback(in);
}

Result<std::vector<std::int32_t>> PromptBuilder::tokenize_chat(const std::vector<ChatTurn>& messages,
                                                               const std::string& continue_text,
                                                               tokenizer::Encoder& encoder,
                                                               const std::atomic<bool>* cancel) const {
  HEARTH_ASSIGN_OR_RETURN(std::string text, render(messages, /*add_generation_prompt=*/true, cancel));
  text += continue_text;
  HEARTH_ASSIGN_OR_RETURN(std::vector<std::int32_t> ids,
                          encoder.encode(text, tokenizer::EncodeOptions{.add_special = false, .parse_special = true}));
  const auto bos = vocab_->bos();
  if (vocab_->add_bos() && bos && (ids.empty() || ids.front() != *bos)) ids.insert(ids.begin(), *bos);
  return ids;
}

Result<std::vector<std::int32_t>> PromptBuilder::build(const Request& request, tokenizer::Encoder& encoder,
                                                       std::int32_t context_length,
                                                       const std::atomic<bool>* cancel) const {
  std::vector<std::int32_t> ids;
  if (!request.messages.empty()) {
    HEARTH_ASSIGN_OR_RETURN(ids, tokenize_chat(request.messages, request.continue_text, encoder, cancel));
  } else if (!request.prompt_tokens.empty()) {
    ids = request.prompt_tokens;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (!vocab_->contains(ids[i])) {
        return make_error(ErrorCode::kInvalidArgument, "prompt_tokens[" + std::to_string(i) + "] = " +
                                                           std::to_string(ids[i]) + " is outside the vocabulary");
      }
    }
  } else {
    HEARTH_ASSIGN_OR_RETURN(
        ids, encoder.encode(request.prompt_text, tokenizer::EncodeOptions{.add_special = true, .parse_special = true}));
  }
  if (ids.empty()) return make_error(ErrorCode::kInvalidArgument, "request: the prompt is empty");
  if (ids.size() >= static_cast<std::size_t>(context_length)) {
    return make_error(ErrorCode::kContextExceeded, "request: the prompt has " + std::to_string(ids.size()) +
                                                       " tokens; the context holds " + std::to_string(context_length) +
                                                       " (prompt and generated tokens together)");
  }
  return ids;
}

}  // namespace hearth::runtime
