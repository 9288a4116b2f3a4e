// The main window's prompt review parts (issue 15): the history window (its
// "open" jumps to the message in its conversation), ratings from the chat
// view, and the variables form a held send asks for.
#include "app/chat_controller.h"
#include "app/chat_view.h"
#include "app/engine_bridge.h"
#include "app/history_window.h"
#include "app/main_window.h"
#include "app/variables_form.h"

namespace hearth::app {

void MainWindow::connectReview() {
  auto* c = controller_.get();
  connect(chat_view_, &ChatView::rateRequested, c,
          [c](qint64 id, int rating) { c->rate(id, static_cast<store::Rating>(rating)); });
  connect(c, &ChatController::messageShown, chat_view_, &ChatView::highlightMessage);
  connect(c, &ChatController::variablesNeeded, this,
          [this](const QString& text, const QString& prompt, const QStringList& names, const QVariantMap& remembered) {
            ask_for_variables(this, controller_.get(), text, prompt, names, remembered);
          });
}

HistoryWindow* MainWindow::showHistoryWindow() {
  auto* window = findChild<HistoryWindow*>();
  if (!window) {
    window = new HistoryWindow(storage_.get(), controller_.get(), engine_.get(), this);
    connect(window, &HistoryWindow::openRequested, this, [this](qint64 conversation, qint64 message) {
      controller_->showMessage(conversation, message);
      raise();
      activateWindow();
    });
  } else {
    window->refresh();
  }
  window->show();
  window->raise();
  return window;
}

}  // namespace hearth::app
