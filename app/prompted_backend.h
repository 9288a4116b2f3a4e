// A ChatBackend in front of another that gives every answer the system
// prompt of the generation settings: the controller sends the conversation's
// messages, and this puts {"system", prompt} first when the prompt is set and
// the conversation has no system message of its own. Everything else passes
// through unchanged (the model, cancel, the token and finish signals).
// The prompt library (versioned prompts) replaces the plain text here.
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

 private:
  ChatBackend* inner_;
  QString system_prompt_;
};

}  // namespace hearth::app
