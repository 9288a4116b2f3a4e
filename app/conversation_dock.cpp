#include "app/conversation_dock.h"

#include <QHBoxLayout>
#include <QInputDialog>
#include <QKeyEvent>
#include <QLineEdit>
#include <QListView>
#include <QMenu>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <utility>

#include "app/conversation_delegate.h"
#include "app/conversation_list_model.h"

namespace hearth::app {

ConversationDock::ConversationDock(ConversationListModel* model, QWidget* parent)
    : QDockWidget(tr("Conversations"), parent), model_(model) {
  setObjectName(QStringLiteral("conversationDock"));
  auto* panel = new QWidget(this);
  auto* layout = new QVBoxLayout(panel);
  layout->setContentsMargins(6, 6, 6, 6);
  search_ = new QLineEdit(panel);
  search_->setObjectName(QStringLiteral("searchField"));
  search_->setPlaceholderText(tr("Search conversations (Ctrl+F)"));
  search_->setClearButtonEnabled(true);
  layout->addWidget(search_);
  list_ = new QListView(panel);
  list_->setObjectName(QStringLiteral("conversationList"));
  list_->setModel(model_);
  list_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  list_->setItemDelegate(new ConversationDelegate(list_));  // date-group headers: rows differ in height
  list_->setSpacing(1);
  list_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  list_->setTextElideMode(Qt::ElideRight);
  layout->addWidget(list_, 1);
  auto* buttons = new QHBoxLayout;
  auto make = [panel, buttons](const QString& text, const QString& name, const QString& tip) {
    auto* b = new QToolButton(panel);
    b->setText(text);
    b->setObjectName(name);
    b->setToolTip(tip);
    buttons->addWidget(b);
    return b;
  };
  auto* add = make(tr("New"), QStringLiteral("newConversationButton"), tr("New conversation (Ctrl+N)"));
  auto* rename = make(tr("Rename"), QStringLiteral("renameConversationButton"), tr("Rename (F2)"));
  auto* remove = make(tr("Delete"), QStringLiteral("deleteConversationButton"), tr("Delete (Del)"));
  buttons->addStretch(1);
  layout->addLayout(buttons);
  setWidget(panel);

  search_delay_ = new QTimer(this);
  search_delay_->setSingleShot(true);
  search_delay_->setInterval(200);
  connect(search_, &QLineEdit::textChanged, search_delay_, qOverload<>(&QTimer::start));
  connect(search_delay_, &QTimer::timeout, this, [this] { emit searchChanged(search_->text()); });
  search_->installEventFilter(this);
  list_->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(list_, &QListView::customContextMenuRequested, this, &ConversationDock::showMenu);
  connect(add, &QToolButton::clicked, this, [this] {
    clearSearch();  // the new chat is listed once it is sent: not behind a search
    emit newRequested();
  });
  connect(rename, &QToolButton::clicked, this, &ConversationDock::renameSelected);
  connect(remove, &QToolButton::clicked, this, &ConversationDock::deleteSelected);
  connect(list_->selectionModel(), &QItemSelectionModel::currentChanged, this, [this](const QModelIndex& current) {
    if (current.isValid() && !quiet_) emit conversationSelected(model_->idAt(current.row()));
  });
  // Keep the open conversation selected across resets (reloads, searches).
  connect(model_, &QAbstractItemModel::modelReset, this, [this] {
    selectConversation(wanted_);
    if (model_->showingSearch() && std::exchange(open_first_result_, false)) openResult(0);
  });
  connect(model_, &QAbstractItemModel::rowsInserted, this, [this] { selectConversation(wanted_); });
}

void ConversationDock::selectConversation(qint64 id) {
  wanted_ = id;
  const int row = model_->rowOf(id);
  quiet_ = true;  // a selection made here is not the user's choice
  if (row < 0) {
    list_->clearSelection();
    list_->setCurrentIndex({});
  } else {
    list_->setCurrentIndex(model_->index(row));
  }
  quiet_ = false;
}

void ConversationDock::showConversation(qint64 id) {
  if (id != 0 && model_->showingSearch() && model_->rowOf(id) < 0) clearSearch();
  selectConversation(id);
}

void ConversationDock::clearSearch() {
  if (search_->text().isEmpty()) return;
  search_->clear();
  search_delay_->stop();
  emit searchChanged(QString());
}

bool ConversationDock::eventFilter(QObject* watched, QEvent* event) {
  const bool override = event->type() == QEvent::ShortcutOverride;
  if (watched != search_ || (event->type() != QEvent::KeyPress && !override)) {
    return QDockWidget::eventFilter(watched, event);
  }
  const int key = static_cast<QKeyEvent*>(event)->key();
  if (override) {
    // Esc is also the window's Stop shortcut: while there is a search, it clears the search.
    if (key == Qt::Key_Escape && !search_->text().isEmpty()) event->accept();
    return false;
  }
  if (key == Qt::Key_Escape && !search_->text().isEmpty()) {
    clearSearch();
    return true;
  }
  if (key == Qt::Key_Down || key == Qt::Key_Up) {
    const int rows = model_->rowCount();
    if (rows == 0) return true;
    const int current = list_->currentIndex().isValid() ? list_->currentIndex().row() : model_->rowOf(wanted_);
    const int next = std::clamp(current + (key == Qt::Key_Down ? 1 : -1), 0, rows - 1);
    list_->setCurrentIndex(model_->index(next));  // opens it, as a click would
    return true;
  }
  if (key == Qt::Key_Return || key == Qt::Key_Enter) {
    if (search_delay_->isActive()) {  // typed just now: the first result opens when the results are in
      search_delay_->stop();
      open_first_result_ = true;
      emit searchChanged(search_->text());
      return true;
    }
    openResult(list_->currentIndex().isValid() ? list_->currentIndex().row() : 0);
    return true;
  }
  return QDockWidget::eventFilter(watched, event);
}

void ConversationDock::openResult(int row) {
  const QModelIndex index = model_->index(row);
  if (!index.isValid()) return;
  list_->setCurrentIndex(index);
  emit conversationSelected(model_->idAt(row));
  emit resultOpened();
}

void ConversationDock::showMenu(const QPoint& at) {
  const QModelIndex index = list_->indexAt(at);
  if (!index.isValid()) return;
  list_->setCurrentIndex(index);
  QMenu menu(this);
  menu.setObjectName(QStringLiteral("conversationMenu"));
  menu.addAction(tr("Rename\u2026"), this, &ConversationDock::renameSelected);
  menu.addAction(tr("Delete"), this, &ConversationDock::deleteSelected);
  menu.exec(list_->viewport()->mapToGlobal(at));
}

qint64 ConversationDock::selectedConversation() const {
  const QModelIndex current = list_->currentIndex();
  return current.isValid() ? model_->idAt(current.row()) : 0;
}

void ConversationDock::renameSelected() {
  const qint64 id = selectedConversation();
  if (id == 0) return;
  bool ok = false;
  const QString title =
      QInputDialog::getText(this, tr("Rename conversation"), tr("Title:"), QLineEdit::Normal, model_->titleOf(id), &ok);
  if (ok && !title.trimmed().isEmpty()) emit renameRequested(id, title);
}

void ConversationDock::deleteSelected() {
  const qint64 id = selectedConversation();
  if (id != 0) emit deleteRequested(id);  // the banner's Undo brings it back
}

}  // namespace hearth::app
