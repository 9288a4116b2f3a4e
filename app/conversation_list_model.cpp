#include "app/conversation_list_model.h"

#include <QDateTime>
#include <QLocale>

#include <algorithm>

#include "app/storage_service.h"

namespace hearth::app {

QString date_group(store::TimeMs updated_ms, const QDateTime& now) {
  const QDate day = QDateTime::fromMSecsSinceEpoch(updated_ms).toLocalTime().date();
  const qint64 days = day.daysTo(now.toLocalTime().date());
  if (days <= 0) return ConversationListModel::tr("Today");
  if (days == 1) return ConversationListModel::tr("Yesterday");
  if (days < 7) return ConversationListModel::tr("Previous 7 days");
  if (days < 30) return ConversationListModel::tr("Previous 30 days");
  return QLocale().toString(day, QStringLiteral("MMMM yyyy"));
}

ConversationListModel::ConversationListModel(QObject* parent) : QAbstractListModel(parent) {}

int ConversationListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(items_.size());
}

QVariant ConversationListModel::data(const QModelIndex& index, int role) const {
  if (index.row() < 0 || index.row() >= rowCount() || index.column() != 0) return {};
  const Item& item = items_[static_cast<std::size_t>(index.row())];
  const QDateTime updated = QDateTime::fromMSecsSinceEpoch(item.updated_ms);
  switch (role) {
    case Qt::DisplayRole:
      if (!duplicates_.contains(item.title)) return item.title;
      return QStringLiteral("%1 \u2014 %2")
          .arg(item.title, QLocale().toString(updated, QStringLiteral("d MMM, HH:mm")));
    case kTitleRole:
      return item.title;
    case kGroupRole:
      return date_group(item.updated_ms, QDateTime::currentDateTime());
    case Qt::ToolTipRole:
      return item.snippet.isEmpty() ? QStringLiteral("%1\n%2").arg(item.title, QLocale().toString(updated))
                                    : item.snippet;
    case kIdRole:
      return QVariant::fromValue(static_cast<qint64>(item.id));
    case kUpdatedRole:
      return updated;
    case kSnippetRole:
      return item.snippet;
    default:
      return {};
  }
}

QHash<int, QByteArray> ConversationListModel::roleNames() const {
  return {{kIdRole, "conversationId"},
          {kTitleRole, "title"},
          {kUpdatedRole, "updated"},
          {kSnippetRole, "snippet"},
          {kGroupRole, "group"}};
}

void ConversationListModel::watch(StorageService* storage) {
  if (storage_) disconnect(storage_, nullptr, this, nullptr);
  storage_ = storage;
  connect(storage, &StorageService::conversationsChanged, this, &ConversationListModel::reload);
  reload();
}

void ConversationListModel::reload() {
  if (!storage_) return;
  if (query_.isEmpty()) {
    storage_->run(
        this, tr("listing conversations"), [](store::Store& s) { return s.list_conversations(); },
        [this](std::vector<store::Conversation> list) {
          if (query_.isEmpty()) setConversations(list);  // else a search started meanwhile
        });
    return;
  }
  storage_->run(
      this, tr("searching"), [q = query_.toStdString()](store::Store& s) { return s.search(q); },
      [this, asked = query_](std::vector<store::SearchHit> hits) {
        if (asked == query_) setSearchHits(hits);
      });
}

void ConversationListModel::setQuery(const QString& text) {
  query_ = text.trimmed();
  reload();
}

void ConversationListModel::setConversations(const std::vector<store::Conversation>& conversations) {
  beginResetModel();
  searching_ = false;
  items_.clear();
  for (const auto& c : conversations) {
    if (c.deleted_ms) continue;
    items_.push_back({c.id, QString::fromStdString(c.title), c.updated_ms, {}});
  }
  sortItems();
  findDuplicates();
  endResetModel();
}

void ConversationListModel::setSearchHits(const std::vector<store::SearchHit>& hits) {
  beginResetModel();
  searching_ = true;
  items_.clear();
  for (const auto& h : hits) {
    items_.push_back(
        {h.conversation_id, QString::fromStdString(h.title), h.updated_ms, QString::fromStdString(h.snippet)});
  }
  sortItems();
  findDuplicates();
  endResetModel();
}

int ConversationListModel::rowOf(store::Id id) const {
  const auto it = std::find_if(items_.begin(), items_.end(), [id](const Item& i) { return i.id == id; });
  return it == items_.end() ? -1 : static_cast<int>(it - items_.begin());
}

store::Id ConversationListModel::idAt(int row) const {
  if (row < 0 || row >= rowCount()) return 0;
  return items_[static_cast<std::size_t>(row)].id;
}

QString ConversationListModel::titleOf(store::Id id) const {
  const int row = rowOf(id);
  return row < 0 ? QString() : items_[static_cast<std::size_t>(row)].title;
}

void ConversationListModel::touch(store::Id id, const QString& title, store::TimeMs updated_ms) {
  const int row = rowOf(id);
  if (row < 0) {
    if (searching_) return;  // not a hit of the current search
    beginInsertRows({}, 0, 0);
    items_.insert(items_.begin(), Item{id, title, updated_ms, {}});
    endInsertRows();
    findDuplicates();
    return;
  }
  items_[static_cast<std::size_t>(row)].updated_ms = updated_ms;
  if (row != 0 && beginMoveRows({}, row, row, {}, 0)) {
    std::rotate(items_.begin(), items_.begin() + row, items_.begin() + row + 1);
    endMoveRows();
  }
}

void ConversationListModel::rename(store::Id id, const QString& title) {
  const int row = rowOf(id);
  if (row < 0) return;
  items_[static_cast<std::size_t>(row)].title = title;
  findDuplicates();
  emit dataChanged(index(row), index(row));
}

void ConversationListModel::remove(store::Id id) {
  const int row = rowOf(id);
  if (row < 0) return;
  beginRemoveRows({}, row, row);
  items_.erase(items_.begin() + row);
  endRemoveRows();
  findDuplicates();
}

// A title change can give or take the date of every row with that title.
void ConversationListModel::findDuplicates() {
  QSet<QString> seen, twice;
  for (const Item& i : items_) {
    if (seen.contains(i.title)) twice.insert(i.title);
    seen.insert(i.title);
  }
  if (twice == duplicates_) return;
  duplicates_ = std::move(twice);
  if (!items_.empty()) emit dataChanged(index(0), index(rowCount() - 1), {Qt::DisplayRole});
}

void ConversationListModel::sortItems() {
  // Most recent first; ties: newest id first (as the store lists them).
  std::stable_sort(items_.begin(), items_.end(), [](const Item& a, const Item& b) {
    return a.updated_ms != b.updated_ms ? a.updated_ms > b.updated_ms : a.id > b.id;
  });
}

}  // namespace hearth::app
