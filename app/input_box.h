// The message editor: Enter sends, Shift+Enter starts a new line.
#pragma once

#include <QPlainTextEdit>

namespace hearth::app {

class InputBox : public QPlainTextEdit {
  Q_OBJECT

 public:
  explicit InputBox(QWidget* parent = nullptr);
  QSize sizeHint() const override;

 signals:
  void submitted(const QString& text);

 protected:
  void keyPressEvent(QKeyEvent* event) override;
};

}  // namespace hearth::app
