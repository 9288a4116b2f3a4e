// The conversation list (left dock): every conversation, most recent activity
// first, or the hits of a full-text search with their snippets. Once it
// watches a StorageService it keeps itself current: every write that changes
// the list (StorageService::conversationsChanged) makes it read the list, or
// re-run its search, from the store.
#pragma once

#include <QAbstractListModel>
#include <QDateTime>
#include <QPointer>
#include <QSet>

#include <vector>

#include "store/records.h"

namespace hearth::app {

class StorageService;

// The date group of a conversation last active at `updated_ms`, seen at `now` (local time).
QString date_group(store::TimeMs updated_ms, const QDateTime& now);

class ConversationListModel : public QAbstractListModel {
  Q_OBJECT

 public:
  // Qt::DisplayRole: the title, with its date when another listed
  // conversation has the same title ("Question — 2 Dec, 14:05").
  // kGroupRole: the date group of its last activity ("Today", "Yesterday",
  // "Previous 7 days", "Previous 30 days", then month and year), shown as a
  // header above the first of each group (ConversationDelegate).
  enum Roles { kIdRole = Qt::UserRole + 1, kTitleRole, kUpdatedRole, kSnippetRole, kGroupRole };

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
  void findDuplicates();

  std::vector<Item> items_;
  QSet<QString> duplicates_;  // titles listed more than once
  bool searching_ = false;
  QPointer<StorageService> storage_;
  QString query_;
};

}  // namespace hearth::app
