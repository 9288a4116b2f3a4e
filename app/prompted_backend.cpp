#include "app/prompted_backend.h"

#include <utility>

#include "app/chat_controller.h"
#include "app/chat_model.h"

namespace hearth::app {

PromptedBackend::PromptedBackend(ChatBackend* inner, QObject* parent) : ChatBackend(parent), inner_(inner) {
  connect(inner_, &ChatBackend::tokens, this, &ChatBackend::tokens);
  connect(inner_, &ChatBackend::finished, this, &ChatBackend::finished);
  connect(inner_, &ChatBackend::tokensCounted, this, &ChatBackend::tokensCounted);
}

void PromptedBackend::generate(const GenerationRequest& request) {
  GenerationRequest prompted = request;
  const QString continued = std::exchange(continuation_, QString());
  if (!continued.isEmpty()) {
    prompted.continue_text = continued.toStdString();
    emit tokens(request.tag, continued, 0);  // the new version starts with the text it continues
  }
  inner_->generate(prompted);
}

bool continue_answer(ChatController& controller, PromptedBackend& backend, qint64 message_id) {
  const auto& rows = controller.chatModel()->rows();
  if (controller.generating() || !backend.model() || rows.empty()) return false;
  const ChatRow& last = rows.back();
  if (last.message.id != message_id || last.message.role != store::Role::kAssistant) return false;
  backend.armContinuation(QString::fromStdString(last.message.content));
  controller.regenerate();
  if (!controller.generating()) backend.disarm();  // refused: the next answer is a plain one
  return true;
}

}  // namespace hearth::app
