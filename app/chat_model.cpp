#include "app/chat_model.h"

namespace hearth::app {

ChatModel::ChatModel(QObject* parent) : QAbstractListModel(parent) {}

int ChatModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QVariant ChatModel::data(const QModelIndex& index, int role) const {
  const ChatRow* r = row(index.row());
  if (!r || index.column() != 0) return {};
  const auto& m = r->message;
  switch (role) {
    case Qt::DisplayRole:
    case kTextRole:
      return QString::fromStdString(m.content);
    case kIdRole:
      return QVariant::fromValue(static_cast<qint64>(m.id));
    case kRoleRole:
      return QString::fromLatin1(store::to_string(m.role));
    case kStatsRole:
      return r->generation ? statsLine(*r->generation) : QString();
    case kSiblingIndexRole:
      return r->sibling_index + 1;
    case kSiblingCountRole:
      return r->sibling_count;
    case kStreamingRole:
      return m.state == store::MessageState::kStreaming;
    case kInterruptedRole:
      return m.state == store::MessageState::kInterrupted;
    case kFinishReasonRole:
      return r->generation ? QString::fromStdString(r->generation->finish_reason) : QString();
    case kRatingRole:
      return static_cast<int>(r->rating);
    case kErrorRole:
      return r->generation ? QString::fromStdString(r->generation->error) : QString();
    default:
      return {};
  }
}

QHash<int, QByteArray> ChatModel::roleNames() const {
  return {{kIdRole, "messageId"},
          {kRoleRole, "role"},
          {kTextRole, "text"},
          {kStatsRole, "stats"},
          {kSiblingIndexRole, "siblingIndex"},
          {kSiblingCountRole, "siblingCount"},
          {kStreamingRole, "streaming"},
          {kInterruptedRole, "interrupted"},
          {kFinishReasonRole, "finishReason"},
          {kRatingRole, "rating"},
          {kErrorRole, "error"}};
}

void ChatModel::setPath(ConversationPath path) {
  beginResetModel();
  conversation_id_ = path.conversation_id;
  rows_ = std::move(path.rows);
  endResetModel();
}

void ChatModel::clear() {
  setPath({});
}

int ChatModel::rowOf(store::Id message_id) const {
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    if (rows_[i].message.id == message_id) return static_cast<int>(i);
  }
  return -1;
}

const ChatRow* ChatModel::row(int index) const {
  if (index < 0 || index >= static_cast<int>(rows_.size())) return nullptr;
  return &rows_[static_cast<std::size_t>(index)];
}

void ChatModel::appendText(store::Id message_id, const QString& text) {
  const int r = rowOf(message_id);
  if (r < 0) return;
  rows_[static_cast<std::size_t>(r)].message.content += text.toStdString();
  changed(r);
}

void ChatModel::setFinished(store::Id message_id, store::MessageState state,
                            std::optional<store::GenerationRecord> generation) {
  const int r = rowOf(message_id);
  if (r < 0) return;
  auto& row_ref = rows_[static_cast<std::size_t>(r)];
  row_ref.message.state = state;
  row_ref.generation = std::move(generation);
  changed(r);
}

void ChatModel::setRating(store::Id message_id, store::Rating rating) {
  const int r = rowOf(message_id);
  if (r < 0) return;
  rows_[static_cast<std::size_t>(r)].rating = rating;
  changed(r);
}

store::Id ChatModel::siblingAt(store::Id message_id, int delta) const {
  const ChatRow* r = row(rowOf(message_id));
  if (!r) return 0;
  const int target = r->sibling_index + delta;
  if (target < 0 || target >= static_cast<int>(r->sibling_ids.size())) return 0;
  return r->sibling_ids[static_cast<std::size_t>(target)];
}

QString ChatModel::statsLine(const store::GenerationRecord& g) {
  QString line = tr("%n tokens", nullptr, static_cast<int>(g.generated_tokens));
  line += QStringLiteral(" · ") + tr("TTFT %1 ms").arg(g.ttft_ms, 0, 'f', 0);
  line += QStringLiteral(" · ") + tr("%1 tok/s").arg(g.decode_tok_s, 0, 'f', 1);
  if (g.cached_tokens > 0) line += QStringLiteral(" · ") + tr("%1 cached").arg(g.cached_tokens);
  if (g.finish_reason == "cancelled") line += QStringLiteral(" · ") + tr("stopped");
  if (g.finish_reason == "length") line += QStringLiteral(" · ") + tr("length: stopped at the token limit");
  if (g.finish_reason == "error") line += QStringLiteral(" · ") + tr("error");
  return line;
}

void ChatModel::changed(int row_index) {
  const QModelIndex i = index(row_index);
  emit dataChanged(i, i);
}

}  // namespace hearth::app
