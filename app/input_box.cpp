#include "app/input_box.h"

#include <QKeyEvent>

namespace hearth::app {

InputBox::InputBox(QWidget* parent) : QPlainTextEdit(parent) {
  setObjectName(QStringLiteral("inputBox"));
  setPlaceholderText(tr("Message the model (Enter sends, Shift+Enter for a new line)"));
  setTabChangesFocus(true);
}

QSize InputBox::sizeHint() const {
  const int line = fontMetrics().lineSpacing();
  return {400, line * 3 + 2 * frameWidth() + 12};
}

void InputBox::keyPressEvent(QKeyEvent* event) {
  const bool enter = event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter;
  if (enter && !(event->modifiers() & Qt::ShiftModifier)) {
    const QString text = toPlainText();
    if (!text.trimmed().isEmpty()) emit submitted(text);
    event->accept();
    return;
  }
  QPlainTextEdit::keyPressEvent(event);
}

}  // namespace hearth::app
