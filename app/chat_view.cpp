#include "app/chat_view.h"

#include <QLabel>
#include <QResizeEvent>
#include <QScrollBar>
#include <QStyle>
#include <QTimer>
#include <QVBoxLayout>

#include "app/chat_model.h"
#include "app/message_widget.h"

#include <algorithm>

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

void ChatView::resizeEvent(QResizeEvent* event) {
  QScrollArea::resizeEvent(event);
  // Side margins that keep the column at most kMaxMessageWidth (16 px at least).
  const int side = std::max(16, (viewport()->width() - kMaxMessageWidth) / 2);
  const QMargins m = column_->contentsMargins();
  if (m.left() != side) column_->setContentsMargins(side, m.top(), side, m.bottom());
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
  v.error = i.data(ChatModel::kErrorRole).toString();
  w->setMessage(v);
}

bool ChatView::highlightMessage(qint64 message_id) {
  MessageWidget* target = nullptr;
  for (MessageWidget* w : widgets_) {
    setHighlighted(w, false);
    if (w->messageId() == message_id) target = w;
  }
  highlighted_ = 0;
  if (!target) return false;
  highlighted_ = message_id;
  setHighlighted(target, true);
  at_end_ = false;  // stay on it while the layout settles
  content_->layout()->activate();
  ensureWidgetVisible(target, 0, 24);
  // Again once the scroll area has taken the new content size (a path just shown).
  QTimer::singleShot(0, target, [this, target] { ensureWidgetVisible(target, 0, 24); });
  QTimer::singleShot(4000, target, [this, target, message_id] {
    setHighlighted(target, false);
    if (highlighted_ == message_id) highlighted_ = 0;
  });
  return true;
}

void ChatView::setHighlighted(MessageWidget* w, bool on) {
  if (w->property("highlighted").toBool() == on) return;
  w->setProperty("highlighted", on);
  w->style()->unpolish(w);
  w->style()->polish(w);
}

void ChatView::scrollToEnd() {
  at_end_ = true;
  followEnd();
}

void ChatView::followEnd() {
  if (at_end_) verticalScrollBar()->setValue(verticalScrollBar()->maximum());
}

}  // namespace hearth::app
