#include "app/chat_view.h"

#include <QLabel>
#include <QScrollBar>
#include <QStyle>
#include <QTimer>
#include <QVBoxLayout>

#include "app/chat_model.h"
#include "app/message_widget.h"

namespace hearth::app {

ChatView::ChatView(ChatModel* model, QWidget* parent) : QScrollArea(parent), model_(model) {
  setObjectName(QStringLiteral("chatView"));
  setWidgetResizable(true);
  setFrameShape(QFrame::NoFrame);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  // A click in the chat (a Copy button, blank space) leaves the focus where it was: in the input.
  setFocusPolicy(Qt::NoFocus);
  content_ = new QWidget(this);
  content_->setObjectName(QStringLiteral("chatContent"));
  column_ = new QVBoxLayout(content_);
  column_->setContentsMargins(16, 12, 16, 12);
  column_->setSpacing(10);
  placeholder_ = new QLabel(tr("<h2>Start a conversation</h2><p>Type a message below and press Enter.<br>"
                               "Shift+Enter starts a new line.</p>"),
                            content_);
  placeholder_->setObjectName(QStringLiteral("chatPlaceholder"));
  placeholder_->setAlignment(Qt::AlignCenter);
  placeholder_->setProperty("muted", true);
  // Bottom-anchored like every chat: the stretch above the messages takes the
  // room a short conversation leaves, so its last message sits at the bottom.
  column_->addStretch(1);
  column_->addWidget(placeholder_, 100);  // alone, it takes nearly all the room: about centred
  setWidget(content_);

  connect(model_, &QAbstractItemModel::modelReset, this, &ChatView::rebuild);
  connect(model_, &QAbstractItemModel::rowsInserted, this, &ChatView::rebuild);
  connect(model_, &QAbstractItemModel::rowsRemoved, this, &ChatView::rebuild);
  connect(model_, &QAbstractItemModel::dataChanged, this, [this](const QModelIndex& from, const QModelIndex& to) {
    for (int r = from.row(); r <= to.row(); ++r) updateRow(r);
    followEnd();
  });
  connect(verticalScrollBar(), &QScrollBar::valueChanged, this,
          [this](int value) { at_end_ = value >= verticalScrollBar()->maximum() - 24; });
  connect(verticalScrollBar(), &QScrollBar::rangeChanged, this, [this](int, int max) {
    if (at_end_) verticalScrollBar()->setValue(max);
  });
  rebuild();
}

MessageWidget* ChatView::messageAt(int row) const {
  return row >= 0 && row < messageCount() ? widgets_[static_cast<std::size_t>(row)] : nullptr;
}

void ChatView::rebuild() {
  for (MessageWidget* w : widgets_) delete w;
  widgets_.clear();
  const int rows = model_->rowCount();
  placeholder_->setVisible(rows == 0);
  for (int r = 0; r < rows; ++r) {
    auto* w = new MessageWidget(content_);
    w->setObjectName(QStringLiteral("message_%1").arg(r));
    connect(w, &MessageWidget::siblingRequested, this, &ChatView::siblingRequested);
    connect(w, &MessageWidget::editRequested, this, &ChatView::editRequested);
    connect(w, &MessageWidget::continueRequested, this, &ChatView::continueRequested);
    connect(w, &MessageWidget::regenerateRequested, this, &ChatView::regenerateRequested);
    connect(w, &MessageWidget::rateRequested, this, &ChatView::rateRequested);
    column_->addWidget(w);
    widgets_.push_back(w);
    updateRow(r);
  }
  at_end_ = true;
  followEnd();
}

void ChatView::updateRow(int row) {
  MessageWidget* w = messageAt(row);
  if (!w) return;
  const QModelIndex i = model_->index(row);
  MessageView v;
  v.id = i.data(ChatModel::kIdRole).toLongLong();
  v.role = i.data(ChatModel::kRoleRole).toString();
  v.text = i.data(ChatModel::kTextRole).toString();
  v.stats = i.data(ChatModel::kStatsRole).toString();
  v.sibling_index = i.data(ChatModel::kSiblingIndexRole).toInt();
  v.sibling_count = i.data(ChatModel::kSiblingCountRole).toInt();
  v.streaming = i.data(ChatModel::kStreamingRole).toBool();
  v.interrupted = i.data(ChatModel::kInterruptedRole).toBool();
  v.finish_reason = i.data(ChatModel::kFinishReasonRole).toString();
  v.last = row == model_->rowCount() - 1;
  v.rating = i.data(ChatModel::kRatingRole).toInt();
  w->setMessage(v);
}

bool ChatView::highlightMessage(qint64 message_id) {
  MessageWidget* target = nullptr;
  for (MessageWidget* w : widgets_) {
    const bool hit = w->messageId() == message_id;
    if (hit) target = w;
    if (w->property("highlighted").toBool() != hit) {
      w->setProperty("highlighted", hit);
      w->style()->unpolish(w);
      w->style()->polish(w);
    }
  }
  highlighted_ = target ? message_id : 0;
  if (!target) return false;
  at_end_ = false;  // stay on it while the rest of the conversation is there
  // After the layout has placed the widgets just built for the conversation.
  QTimer::singleShot(0, this, [this, message_id] {
    for (MessageWidget* w : widgets_) {
      if (w->messageId() == message_id) ensureWidgetVisible(w, 0, 40);
    }
  });
  return true;
}

void ChatView::scrollToEnd() {
  at_end_ = true;
  followEnd();
}

void ChatView::followEnd() {
  if (at_end_) verticalScrollBar()->setValue(verticalScrollBar()->maximum());
}

}  // namespace hearth::app
