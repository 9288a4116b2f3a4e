// A ChatBackend in front of another that can continue an answer; everything
// else passes through unchanged (the model, cancel, the token and finish
// signals). (The generation settings' system prompt is the turn's, made in
// conversation/ so that the answer's record holds it: ChatController::setSystemPrompt.)
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

  const std::optional<LoadedModel>& model() const override { return inner_->model(); }
  void generate(const GenerationRequest& request) override;
  void cancel(qint64 tag) override { inner_->cancel(tag); }
  void countTokens(const TokenCountRequest& request) override { inner_->countTokens(request); }

  void armContinuation(const QString& text) { continuation_ = text; }
  void disarm() { continuation_.clear(); }

 private:
  ChatBackend* inner_;
  QString continuation_;  // the next request continues this text
};

class ChatController;
// Continues the conversation's last answer `message_id` (cut at the token
// limit) as its next version. False when it cannot now: not the last answer,
// an answer on its way, no model.
bool continue_answer(ChatController& controller, PromptedBackend& backend, qint64 message_id);

}  // namespace hearth::app
