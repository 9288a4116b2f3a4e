// What the chat controller needs from whatever produces answers: the local
// engine (EngineBridge, on its own thread) today, a remote OpenAI-compatible
// endpoint later, a scripted fake in the GUI tests. Calls come from the UI
// thread and return at once; tokens() and finished() arrive on the UI thread.
// Every generate() ends with exactly one finished() for its tag (kStop,
// kLength, kCancelled after cancel(), or kError with a message).
#pragma once

#include <QObject>
#include <QString>

#include <optional>

#include "app/engine_types.h"

namespace hearth::app {

class ChatBackend : public QObject {
  Q_OBJECT

 public:
  using QObject::QObject;

  // What answers, as the backend reports it; nullopt while nothing can.
  virtual const std::optional<LoadedModel>& model() const = 0;
  virtual void generate(const GenerationRequest& request) = 0;
  // Unknown or finished tags are ignored.
  virtual void cancel(qint64 tag) = 0;
  // Answered by one tokensCounted(request.tag, n), perhaps before this
  // returns; n < 0 when nothing can count now (no model). By default nothing can.
  virtual void countTokens(const TokenCountRequest& request) { emit tokensCounted(request.tag, -1); }

 signals:
  void tokens(qint64 tag, const QString& text, int count);
  void tokensCounted(qint64 tag, int tokens);
  void finished(const hearth::app::GenerationDone& done);
};

}  // namespace hearth::app
