// A non-modal message strip above the chat: errors (engine, model, database)
// and notices with an optional action ("Undo"). Never blocks the window.
#pragma once

#include <QFrame>

#include <functional>

class QLabel;
class QPushButton;
class QTimer;

namespace hearth::app {

class Banner : public QFrame {
  Q_OBJECT

 public:
  explicit Banner(QWidget* parent = nullptr);

  void showError(const QString& message);
  // A notice with an action button; hides itself after `timeout_ms`.
  void showNotice(const QString& message, const QString& action, std::function<void()> on_action,
                  int timeout_ms = 10000);
  // A notice whose rich text holds links (<a href="...">); a click calls
  // on_link(href) and the notice stays until dismissed.
  void showLinks(const QString& html, std::function<void(const QString&)> on_link);
  QString text() const;
  bool showingError() const;
  void clearError();  // hides an error (a notice stays)

 private:
  void present(const QString& kind, const QString& message, Qt::TextFormat format = Qt::PlainText);

  QLabel* text_ = nullptr;
  QPushButton* action_ = nullptr;
  QTimer* hide_timer_ = nullptr;
  std::function<void()> on_action_;
  std::function<void(const QString&)> on_link_;
};

}  // namespace hearth::app
