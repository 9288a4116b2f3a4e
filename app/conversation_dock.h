// The left dock: search field, the conversation list (most recent first) and
// New / Rename / Delete. Emits domain signals; the controller does the work.
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
  qint64 selectedConversation() const;
  QLineEdit* searchField() const { return search_; }

 public slots:
  void renameSelected();
  void deleteSelected();  // asks for confirmation first

 signals:
  void conversationSelected(qint64 id);
  void newRequested();
  void renameRequested(qint64 id, const QString& title);
  void deleteRequested(qint64 id);
  void searchChanged(const QString& text);

 private:
  ConversationListModel* model_;
  QLineEdit* search_ = nullptr;
  QListView* list_ = nullptr;
  QTimer* search_delay_ = nullptr;  // searches once typing pauses
  qint64 wanted_ = 0;               // selected once it appears in the list
  bool quiet_ = false;
};

}  // namespace hearth::app
