// The messages of the open conversation, root to current leaf, as a list
// model: one row per message. Streaming text is appended in place.
#pragma once

#include <QAbstractListModel>

#include <vector>

#include "app/chat_rows.h"

namespace hearth::app {

class ChatModel : public QAbstractListModel {
  Q_OBJECT

 public:
  enum Roles {
    kIdRole = Qt::UserRole + 1,
    kRoleRole,          // "user", "assistant", "system"
    kTextRole,          // Markdown source
    kStatsRole,         // "16 tokens · TTFT 42 ms · 95.1 tok/s"; "" when unknown
    kSiblingIndexRole,  // 1-based, as shown in "< 2/3 >"
    kSiblingCountRole,
    kStreamingRole,     // bool
    kInterruptedRole,   // bool: the app died while this answer streamed
    kFinishReasonRole,  // the generation's: "stop", "length", "cancelled", "error"; "" when none
    kRatingRole,        // int: store::Rating (1 up, -1 down, 0 none)
    kErrorRole,         // finish reason "error": why the answer failed part-way (the record's); "" otherwise
  };

  explicit ChatModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;

  void setPath(ConversationPath path);
  void clear();
  store::Id conversationId() const { return conversation_id_; }
  int rowOf(store::Id message_id) const;  // -1 when not shown
  const ChatRow* row(int index) const;
  const std::vector<ChatRow>& rows() const { return rows_; }

  void appendText(store::Id message_id, const QString& text);
  void setFinished(store::Id message_id, store::MessageState state, std::optional<store::GenerationRecord> generation);
  void setRating(store::Id message_id, store::Rating rating);

  // The sibling `delta` steps from `message_id` (wrapping is not done); 0 when none.
  store::Id siblingAt(store::Id message_id, int delta) const;

  static QString statsLine(const store::GenerationRecord& g);

 private:
  void changed(int row);

  store::Id conversation_id_ = 0;
  std::vector<ChatRow> rows_;
};

}  // namespace hearth::app
