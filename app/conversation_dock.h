// The left dock: search field, the conversation list (most recent first) and
// New / Rename / Delete (also on the list's right-click menu). Emits domain
// signals; the controller does the work. In the search field Esc clears it,
// Up / Down move through the results and Enter opens the selected one (the
// first when none is).
#pragma once

#include <QDockWidget>

class QLineEdit;
class QListView;
class QTimer;
class QToolButton;

namespace hearth::app {

class ConversationListModel;

class ConversationDock : public QDockWidget {
  Q_OBJECT

 public:
  ConversationDock(ConversationListModel* model, QWidget* parent = nullptr);
  void selectConversation(qint64 id);
  // The conversation the chat shows: selected, and listed (a search that
  // hides it, such as one running while a new chat is created, is cleared).
  void showConversation(qint64 id);
  void clearSearch();
  qint64 selectedConversation() const;
  QLineEdit* searchField() const { return search_; }

 public slots:
  void renameSelected();
  void deleteSelected();  // no confirmation: the banner offers Undo

 signals:
  void conversationSelected(qint64 id);
  void newRequested();
  void renameRequested(qint64 id, const QString& title);
  void deleteRequested(qint64 id);
  void searchChanged(const QString& text);
  void resultOpened();  // Enter in the search field opened a result: the input can take the focus

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void showMenu(const QPoint& at);
  void openResult(int row);

  ConversationListModel* model_;
  QLineEdit* search_ = nullptr;
  QListView* list_ = nullptr;
  QTimer* search_delay_ = nullptr;  // searches once typing pauses
  qint64 wanted_ = 0;               // selected once it appears in the list
  bool quiet_ = false;
  bool open_first_result_ = false;  // Enter came before the results: open the first when they arrive
};

}  // namespace hearth::app
