#include "app/conversation_delegate.h"

#include <QApplication>
#include <QPainter>

#include "app/conversation_list_model.h"

namespace hearth::app {

QString ConversationDelegate::headerOf(const QModelIndex& index) {
  const QString group = index.data(ConversationListModel::kGroupRole).toString();
  if (index.row() == 0) return group;
  const QString before = index.sibling(index.row() - 1, 0).data(ConversationListModel::kGroupRole).toString();
  return group == before ? QString() : group;
}

int ConversationDelegate::headerHeight(const QStyleOptionViewItem& option) {
  return option.fontMetrics.height() + 10;
}

QSize ConversationDelegate::sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const {
  QSize size = QStyledItemDelegate::sizeHint(option, index);
  if (!headerOf(index).isEmpty()) size.rheight() += headerHeight(option);
  return size;
}

void ConversationDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option,
                                 const QModelIndex& index) const {
  const QString header = headerOf(index);
  if (header.isEmpty()) return QStyledItemDelegate::paint(painter, option, index);
  const int h = headerHeight(option);
  QRect top = option.rect;
  top.setHeight(h);
  painter->save();
  QFont font = option.font;
  font.setBold(true);
  if (font.pointSizeF() > 0) font.setPointSizeF(font.pointSizeF() * 0.9);
  painter->setFont(font);
  QColor muted = option.palette.color(QPalette::Text);
  muted.setAlphaF(0.6f);
  painter->setPen(muted);
  painter->drawText(top.adjusted(6, 4, -4, 0), Qt::AlignLeft | Qt::AlignBottom, header);
  painter->restore();
  QStyleOptionViewItem below = option;
  below.rect.setTop(option.rect.top() + h);
  QStyledItemDelegate::paint(painter, below, index);
}

}  // namespace hearth::app
