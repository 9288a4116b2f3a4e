#include "app/conversation_dock.h"

#include <QHBoxLayout>
#include <QInputDialog>
#include <QLineEdit>
#include <QListView>
#include <QMessageBox>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

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
  list_->setUniformItemSizes(true);
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
  connect(add, &QToolButton::clicked, this, &ConversationDock::newRequested);
  connect(rename, &QToolButton::clicked, this, &ConversationDock::renameSelected);
  connect(remove, &QToolButton::clicked, this, &ConversationDock::deleteSelected);
  connect(list_->selectionModel(), &QItemSelectionModel::currentChanged, this, [this](const QModelIndex& current) {
    if (current.isValid() && !quiet_) emit conversationSelected(model_->idAt(current.row()));
  });
  // Keep the open conversation selected across resets (reloads, searches).
  connect(model_, &QAbstractItemModel::modelReset, this, [this] { selectConversation(wanted_); });
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
  if (id == 0) return;
  const auto answer = QMessageBox::question(
      this, tr("Delete conversation"), tr("Delete \"%1\"? You can undo this right after.").arg(model_->titleOf(id)),
      QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel);
  if (answer == QMessageBox::Yes) emit deleteRequested(id);
}

}  // namespace hearth::app
