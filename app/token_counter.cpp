#include "app/token_counter.h"

#include <QLocale>
#include <QPlainTextEdit>

#include "app/chat_backend.h"

namespace hearth::app {

TokenCounter::TokenCounter(QPlainTextEdit* input, ChatBackend* backend, QWidget* parent)
    : QLabel(parent), input_(input), backend_(backend) {
  setObjectName(QStringLiteral("tokenCounter"));
  setProperty("muted", true);
  setAlignment(Qt::AlignCenter);
  setToolTip(tr("The message's length in the model's tokens (its tokenizer)"));
  delay_.setSingleShot(true);
  delay_.setInterval(kDelayMs);
  connect(&delay_, &QTimer::timeout, this, &TokenCounter::recount);
  connect(input_, &QPlainTextEdit::textChanged, &delay_, qOverload<>(&QTimer::start));
  connect(backend_, &ChatBackend::tokensCounted, this, [this](qint64 tag, int tokens) {
    if (tag != asked_ || asked_ == 0) return;
    asked_ = 0;
    tokens_ = tokens;
    if (tokens < 0) return clear();
    setText(tokens == 1 ? tr("1 token") : tr("%1 tokens").arg(QLocale().toString(tokens)));
  });
}

void TokenCounter::recount() {
  delay_.stop();
  const QString text = input_->toPlainText();
  if (text.isEmpty()) {
    asked_ = 0;
    tokens_ = -1;
    return clear();
  }
  // Negative tags: the controller's counts use positive ones.
  static qint64 next_tag = 0;
  asked_ = --next_tag;
  TokenCountRequest request;
  request.tag = asked_;
  request.text = text.toStdString();
  backend_->countTokens(request);
}

}  // namespace hearth::app
