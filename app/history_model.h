// The prompt history as a table: every user prompt sent (Store::history),
// one row each, newest first unless sorted otherwise. Paged: the first page
// and the total come with each new filter, later pages when the view scrolls
// near the end (canFetchMore / fetchMore), so 100,000 prompts cost one page of
// rows until someone scrolls. Every read runs on the storage thread; a reply
// to an older filter is dropped.
#pragma once

#include <QAbstractTableModel>

#include <cstdint>
#include <vector>

#include "store/review_records.h"

namespace hearth::app {

class StorageService;

// What the history window filters on: the store's query, plus the prompt as
// the user names it ("NAME": any version, "NAME@3", "NAME@production"),
// resolved to ids on the storage thread.
struct HistoryFilter {
  store::HistoryQuery query{};
  QString prompt;
};

class HistoryModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    kTime,
    kText,  // the prompt's first line
    kConversation,
    kPromptVersion,
    kModel,
    kQuantization,
    kKvPrecision,
    kDevice,
    kSampling,
    kPromptTokens,
    kCachedTokens,
    kGeneratedTokens,
    kTtft,
    kDecodeTps,
    kFinish,
    kRating,
    kColumnCount
  };
  static constexpr int kPageRows = 200;
  static constexpr int kMessageIdRole = Qt::UserRole + 1;
  static constexpr int kConversationIdRole = Qt::UserRole + 2;

  explicit HistoryModel(StorageService* storage, QObject* parent = nullptr);

  // Starts over with this filter (the sort is kept unless the filter's query sets one).
  void setFilter(const HistoryFilter& filter);
  const HistoryFilter& filter() const { return filter_; }
  // The query as last resolved (prompt ids filled in): what an experiment reuses.
  const store::HistoryQuery& resolvedQuery() const { return resolved_; }
  std::int64_t total() const { return total_; }
  bool loading() const { return loading_; }
  const store::HistoryEntry* entry(int row) const;
  void reload() { setFilter(filter_); }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
  void sort(int column, Qt::SortOrder order) override;
  bool canFetchMore(const QModelIndex& parent) const override;
  void fetchMore(const QModelIndex& parent) override;

  static store::HistorySort sortOf(int column);

 signals:
  void loaded();  // a page (and, for a new filter, the total) arrived
  void failed(const QString& message);

 private:
  void loadPage(bool fresh);

  StorageService* storage_;
  HistoryFilter filter_;
  store::HistoryQuery resolved_;
  std::vector<store::HistoryEntry> rows_;
  std::int64_t total_ = 0;
  std::uint64_t generation_ = 0;  // of the filter; a reply for an older one is dropped
  bool loading_ = false;
};

}  // namespace hearth::app
