#include "app/prompted_backend.h"

namespace hearth::app {

PromptedBackend::PromptedBackend(ChatBackend* inner, QObject* parent) : ChatBackend(parent), inner_(inner) {
  connect(inner_, &ChatBackend::tokens, this, &ChatBackend::tokens);
  connect(inner_, &ChatBackend::finished, this, &ChatBackend::finished);
}

void PromptedBackend::generate(const GenerationRequest& request) {
  const bool has_system = !request.turns.empty() && request.turns.front().role == "system";
  if (system_prompt_.trimmed().isEmpty() || has_system) return inner_->generate(request);
  GenerationRequest prompted = request;
  prompted.turns.insert(prompted.turns.begin(), ChatTurn{"system", system_prompt_.toStdString()});
  inner_->generate(prompted);
}

}  // namespace hearth::app
