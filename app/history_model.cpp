#include "app/history_model.h"

#include <QDateTime>

#include "app/rating_marks.h"
#include "app/storage_service.h"

namespace hearth::app {
namespace {

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

// A page as read on the storage thread.
struct Page {
  std::vector<store::HistoryEntry> rows;
  std::int64_t total = -1;  // -1: not counted (a later page)
  store::HistoryQuery resolved;
  std::string problem;  // the prompt filter names nothing: no rows, this message
};

// The prompt filter as ids: "NAME" any version, "NAME@N" / "NAME@LABEL" one.
store::StoreResult<void> resolve_prompt_filter(store::Store& s, const std::string& prompt, store::HistoryQuery& q) {
  q.prompt_id.reset();
  q.prompt_version_id.reset();
  if (prompt.empty()) return {};
  if (prompt.find('@') == std::string::npos) {
    STORE_ASSIGN_OR_RETURN(const store::Prompt p, s.find_prompt(prompt));
    q.prompt_id = p.id;
    return {};
  }
  STORE_ASSIGN_OR_RETURN(const store::ResolvedPrompt r, s.resolve_prompt(prompt));
  q.prompt_version_id = r.version.id;
  return {};
}

QString sampling_text(const store::SamplingRecord& s) {
  return QStringLiteral("T %1 · p %2 · k %3 · seed %4")
      .arg(s.temperature, 0, 'f', 2)
      .arg(s.top_p, 0, 'f', 2)
      .arg(s.top_k)
      .arg(s.seed);
}

QString first_line(const std::string& text) {
  QString line = qs(text).trimmed().section(QLatin1Char('\n'), 0, 0).simplified();
  if (line.size() > 80) line = line.left(79) + QChar(0x2026);
  return line;
}

}  // namespace

HistoryModel::HistoryModel(StorageService* storage, QObject* parent) : QAbstractTableModel(parent), storage_(storage) {}

void HistoryModel::setFilter(const HistoryFilter& filter) {
  const store::HistorySort sort = filter_.query.sort;
  const bool descending = filter_.query.descending;
  filter_ = filter;
  if (filter.query.sort == store::HistorySort::kTime && filter.query.descending) {
    filter_.query.sort = sort;  // a new filter keeps the column the user sorted by
    filter_.query.descending = descending;
  }
  loadPage(true);
}

void HistoryModel::loadPage(bool fresh) {
  const std::uint64_t generation = fresh ? ++generation_ : generation_;
  store::HistoryQuery query = filter_.query;
  query.limit = kPageRows;
  query.offset = fresh ? 0 : static_cast<int>(rows_.size());
  loading_ = true;
  storage_->run(
      this, tr("reading the prompt history"),
      [query, prompt = filter_.prompt.toStdString(), fresh](store::Store& s) -> store::StoreResult<Page> {
        Page page;
        page.resolved = query;
        if (auto resolved = resolve_prompt_filter(s, prompt, page.resolved); !resolved) {
          page.problem = resolved.error().message;
          page.total = 0;
          return page;
        }
        STORE_ASSIGN_OR_RETURN(page.rows, s.history(page.resolved));
        if (fresh) {
          STORE_ASSIGN_OR_RETURN(page.total, s.history_count(page.resolved));
        }
        return page;
      },
      [this, generation, fresh](Page page) {
        if (generation != generation_) return;  // the filter changed meanwhile
        loading_ = false;
        resolved_ = page.resolved;
        resolved_.offset = 0;
        if (fresh) {
          beginResetModel();
          rows_ = std::move(page.rows);
          total_ = page.total;
          endResetModel();
        } else if (!page.rows.empty()) {
          const int first = static_cast<int>(rows_.size());
          beginInsertRows({}, first, first + static_cast<int>(page.rows.size()) - 1);
          for (auto& e : page.rows) rows_.push_back(std::move(e));
          endInsertRows();
        } else {
          total_ = static_cast<std::int64_t>(rows_.size());  // rows went away since the count
        }
        if (!page.problem.empty()) emit failed(qs(page.problem));
        emit loaded();
      });
}

const store::HistoryEntry* HistoryModel::entry(int row) const {
  if (row < 0 || row >= static_cast<int>(rows_.size())) return nullptr;
  return &rows_[static_cast<std::size_t>(row)];
}

int HistoryModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int HistoryModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant HistoryModel::data(const QModelIndex& index, int role) const {
  const store::HistoryEntry* e = entry(index.row());
  if (!e) return {};
  if (role == kMessageIdRole) return QVariant::fromValue(static_cast<qint64>(e->message_id));
  if (role == kConversationIdRole) return QVariant::fromValue(static_cast<qint64>(e->conversation_id));
  if (role == Qt::ToolTipRole && index.column() == kText) return qs(e->text);
  if (role == Qt::TextAlignmentRole && index.column() >= kPromptTokens && index.column() <= kDecodeTps) {
    return static_cast<int>(Qt::AlignRight | Qt::AlignVCenter);
  }
  if (role != Qt::DisplayRole) return {};
  const auto& g = e->generation;
  switch (index.column()) {
    case kTime:
      return QDateTime::fromMSecsSinceEpoch(e->created_ms).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    case kText:
      return first_line(e->text);
    case kConversation:
      return qs(e->conversation_title);
    case kPromptVersion:
      return e->prompt_version > 0 ? QStringLiteral("%1@%2").arg(qs(e->prompt_name)).arg(e->prompt_version) : QString();
    case kRating:
      return e->rating == store::Rating::kUp     ? rated_up_mark()
             : e->rating == store::Rating::kDown ? rated_down_mark()
                                                 : QString();
    default:
      break;
  }
  if (!g) return {};
  switch (index.column()) {
    case kModel:
      return qs(g->model_name);
    case kQuantization:
      return qs(g->quantization);
    case kKvPrecision:
      return qs(g->kv_precision);
    case kDevice:
      return qs(g->device);
    case kSampling:
      return sampling_text(g->sampling);
    case kPromptTokens:
      return QVariant::fromValue(g->prompt_tokens);
    case kCachedTokens:
      return QVariant::fromValue(g->cached_tokens);
    case kGeneratedTokens:
      return QVariant::fromValue(g->generated_tokens);
    case kTtft:
      return QString::number(g->ttft_ms, 'f', 1);
    case kDecodeTps:
      return QString::number(g->decode_tok_s, 'f', 1);
    case kFinish:
      return qs(g->finish_reason);
    default:
      return {};
  }
}

QVariant HistoryModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kTime:
      return tr("Time");
    case kText:
      return tr("Prompt");
    case kConversation:
      return tr("Conversation");
    case kPromptVersion:
      return tr("Prompt version");
    case kModel:
      return tr("Model");
    case kQuantization:
      return tr("Quantization");
    case kKvPrecision:
      return tr("KV");
    case kDevice:
      return tr("Device");
    case kSampling:
      return tr("Sampling");
    case kPromptTokens:
      return tr("Prompt tokens");
    case kCachedTokens:
      return tr("Cached");
    case kGeneratedTokens:
      return tr("Generated");
    case kTtft:
      return tr("TTFT ms");
    case kDecodeTps:
      return tr("Decode tok/s");
    case kFinish:
      return tr("Finish");
    case kRating:
      return tr("Rating");
    default:
      return {};
  }
}

store::HistorySort HistoryModel::sortOf(int column) {
  using S = store::HistorySort;
  switch (column) {
    case kText:
      return S::kText;
    case kConversation:
      return S::kConversation;
    case kPromptVersion:
      return S::kPromptVersion;
    case kModel:
      return S::kModel;
    case kQuantization:
      return S::kQuantization;
    case kKvPrecision:
      return S::kKvPrecision;
    case kDevice:
      return S::kDevice;
    case kSampling:
      return S::kTemperature;
    case kPromptTokens:
      return S::kPromptTokens;
    case kCachedTokens:
      return S::kCachedTokens;
    case kGeneratedTokens:
      return S::kGeneratedTokens;
    case kTtft:
      return S::kTtft;
    case kDecodeTps:
      return S::kDecodeTps;
    case kFinish:
      return S::kFinishReason;
    case kRating:
      return S::kRating;
    default:
      return S::kTime;
  }
}

void HistoryModel::sort(int column, Qt::SortOrder order) {
  const store::HistorySort sort = sortOf(column);
  const bool descending = order == Qt::DescendingOrder;
  if (sort == filter_.query.sort && descending == filter_.query.descending && !rows_.empty()) return;
  filter_.query.sort = sort;
  filter_.query.descending = descending;
  loadPage(true);
}

bool HistoryModel::canFetchMore(const QModelIndex& parent) const {
  return !parent.isValid() && !loading_ && static_cast<std::int64_t>(rows_.size()) < total_;
}

void HistoryModel::fetchMore(const QModelIndex& parent) {
  if (canFetchMore(parent)) loadPage(false);
}

}  // namespace hearth::app
