// The conversation list (left dock): every conversation, most recent activity
// first, or the hits of a full-text search with their snippets. Once it
// watches a StorageService it keeps itself current: every write that changes
// the list (StorageService::conversationsChanged) makes it read the list, or
// re-run its search, from the store.
#pragma once

#include <QAbstractListModel>
#include <QPointer>

#include <vector>

#include "store/records.h"

namespace hearth::app {

class StorageService;

class ConversationListModel : public QAbstractListModel {
  Q_OBJECT

 public:
  enum Roles { kIdRole = Qt::UserRole + 1, kTitleRole, kUpdatedRole, kSnippetRole };

  explicit ConversationListModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;

  // Subscribes to the storage's change signal and reads the list now.
  void watch(StorageService* storage);
  // Reads the list (or the search hits of query()) from the watched storage.
  void reload();
  // "" shows every conversation; anything else the hits of a full-text search.
  void setQuery(const QString& text);
  const QString& query() const { return query_; }

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
  QPointer<StorageService> storage_;
  QString query_;
};

}  // namespace hearth::app
