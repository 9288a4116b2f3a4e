// The conversation list (left dock): every conversation, most recent activity
// first, or the hits of a full-text search with their snippets.
#pragma once

#include <QAbstractListModel>

#include <vector>

#include "store/records.h"

namespace hearth::app {

class ConversationListModel : public QAbstractListModel {
  Q_OBJECT

 public:
  enum Roles { kIdRole = Qt::UserRole + 1, kTitleRole, kUpdatedRole, kSnippetRole };

  explicit ConversationListModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;

  void setConversations(const std::vector<store::Conversation>& conversations);
  void setSearchHits(const std::vector<store::SearchHit>& hits);
  bool showingSearch() const { return searching_; }

  int rowOf(store::Id id) const;  // -1 when not listed
  store::Id idAt(int row) const;  // 0 when out of range
  QString titleOf(store::Id id) const;

  // Local updates while the store catches up: insert or move to the top, retitle, drop.
  void touch(store::Id id, const QString& title, store::TimeMs updated_ms);
  void rename(store::Id id, const QString& title);
  void remove(store::Id id);

 private:
  struct Item {
    store::Id id = 0;
    QString title;
    store::TimeMs updated_ms = 0;
    QString snippet;
  };
  void sortItems();

  std::vector<Item> items_;
  bool searching_ = false;
};

}  // namespace hearth::app
