// A ChatBackend in front of another that gives every answer the system
// prompt of the generation settings: the controller sends the conversation's
// messages, and this puts {"system", prompt} first when the prompt is set and
// the conversation has no system message of its own. Everything else passes
// through unchanged (the model, cancel, the token and finish signals).
// The prompt library (versioned prompts) replaces the plain text here.
//
// Continue (an answer cut at the token limit): continue_answer() arms this
// with the answer's text and asks the controller to regenerate; the next
// request then starts with that text, shown at once as the new version's
// first tokens, and the model goes on from it. The cut version stays as the
// previous branch ("< 1/2"), as Regenerate would leave it.
#pragma once

#include "app/chat_backend.h"

namespace hearth::app {

class PromptedBackend final : public ChatBackend {
  Q_OBJECT

 public:
  explicit PromptedBackend(ChatBackend* inner, QObject* parent = nullptr);

  void setSystemPrompt(const QString& prompt) { system_prompt_ = prompt; }
  const QString& systemPrompt() const { return system_prompt_; }

  const std::optional<LoadedModel>& model() const override { return inner_->model(); }
  void generate(const GenerationRequest& request) override;
  void cancel(qint64 tag) override { inner_->cancel(tag); }

  void armContinuation(const QString& text) { continuation_ = text; }
  void disarm() { continuation_.clear(); }

 private:
  ChatBackend* inner_;
  QString system_prompt_;
  QString continuation_;  // the next request continues this text
};

class ChatController;
// Continues the conversation's last answer `message_id` (cut at the token
// limit) as its next version. False when it cannot now: not the last answer,
// an answer on its way, no model.
bool continue_answer(ChatController& controller, PromptedBackend& backend, qint64 message_id);

}  // namespace hearth::app
