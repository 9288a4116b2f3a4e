// The size of the message being typed, in the loaded model's tokens ("12
// tokens"), under the Send button: counted by the backend a moment after the
// typing stops (one count per pause, not per key). Empty while nothing is
// typed or nothing can count (no model).
#pragma once

#include <QLabel>
#include <QTimer>

class QPlainTextEdit;

namespace hearth::app {

class ChatBackend;

class TokenCounter : public QLabel {
  Q_OBJECT

 public:
  static constexpr int kDelayMs = 250;

  TokenCounter(QPlainTextEdit* input, ChatBackend* backend, QWidget* parent = nullptr);
  int tokens() const { return tokens_; }  // the last count shown; -1: none

 public slots:
  void recount();  // now (a model was loaded)

 private:
  QPlainTextEdit* input_;
  ChatBackend* backend_;
  QTimer delay_;
  qint64 asked_ = 0;  // the tag of the count awaited; 0: none
  int tokens_ = -1;
};

}  // namespace hearth::app
