// The conversation list's rows: the title, with a date-group header
// ("Today", "Yesterday", ...: ConversationListModel::kGroupRole) above the
// first row of each group, drawn in the row's own space so that the model
// keeps one row per conversation.
#pragma once

#include <QStyledItemDelegate>

namespace hearth::app {

class ConversationDelegate : public QStyledItemDelegate {
  Q_OBJECT

 public:
  using QStyledItemDelegate::QStyledItemDelegate;

  // The header above `index`, "" when it continues the group of the row before.
  static QString headerOf(const QModelIndex& index);

  QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override;
  void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override;

 private:
  static int headerHeight(const QStyleOptionViewItem& option);
};

}  // namespace hearth::app
