#include "app/stats_history_model.h"

#include <algorithm>

namespace hearth::app {
namespace {

double mib(std::size_t bytes) {
  return static_cast<double>(bytes) / (1024.0 * 1024.0);
}

}  // namespace

StatsHistoryModel::StatsHistoryModel(QObject* parent) : QAbstractTableModel(parent) {}

int StatsHistoryModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(samples_.size());
}

int StatsHistoryModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QVariant StatsHistoryModel::data(const QModelIndex& index, int role) const {
  if (role != Qt::DisplayRole || !index.isValid() || index.row() >= rowCount()) return {};
  return value(index.row(), static_cast<Column>(index.column()));
}

QVariant StatsHistoryModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* const names[kColumnCount] = {"time (s)",    "decode tok/s",  "prefill tok/s", "weights MiB",
                                                  "KV pool MiB", "workspace MiB", "other MiB",     "free MiB",
                                                  "KV used",     "KV cached",     "KV free",       "prefix hit %",
                                                  "TTFT p50 ms", "ITL p50 ms",    "ITL p95 ms",    "ITL p99 ms"};
  return section >= 0 && section < kColumnCount ? QString::fromLatin1(names[section]) : QVariant();
}

double StatsHistoryModel::value(int row, Column column) const {
  if (row < 0 || row >= rowCount()) return 0;
  const StatsSample& s = samples_[static_cast<std::size_t>(row)];
  const EngineStats& e = s.stats;
  const auto& m = e.memory;
  const bool device = m.device_total > 0;
  switch (column) {
    case kTimeS:
      return s.time_s;
    case kDecodeTps:
      return e.decode_tps;
    case kPrefillTps:
      return e.prefill_tps;
    case kWeightsMiB:
      return mib(m.weights);
    case kKvPoolMiB:
      return mib(m.kv_pool);
    case kWorkspaceMiB:
      return mib(m.workspace);
    case kOtherMiB: {
      // CPU: the weights are mapped into the process, so the rest of the RSS is
      // what the app itself (Qt, SQLite, buffers) holds. GPU: other processes.
      const double known = mib(m.weights) + mib(m.kv_pool) + mib(m.workspace);
      const double total = device ? mib(m.device_total - m.device_free) : static_cast<double>(s.rss_bytes) / 1048576.0;
      return std::max(0.0, total - known);
    }
    case kDeviceFreeMiB:
      return device ? mib(m.device_free) : 0.0;
    case kKvUsed:
      return e.kv_blocks_used;
    case kKvCached:
      return e.kv_blocks_cached;
    case kKvFree:
      return e.kv_blocks_free;
    case kPrefixHitPct:
      return 100.0 * e.prefix_hit_rate;
    case kTtftP50Ms:
      return e.ttft.p50;
    case kItlP50Ms:
      return e.inter_token.p50;
    case kItlP95Ms:
      return e.inter_token.p95;
    case kItlP99Ms:
      return e.inter_token.p99;
    case kColumnCount:
      break;
  }
  return 0;
}

void StatsHistoryModel::append(const StatsSample& sample) {
  if (samples_.size() >= kCapacity) {
    beginRemoveRows({}, 0, 0);
    samples_.pop_front();
    endRemoveRows();
  }
  const int row = rowCount();
  beginInsertRows({}, row, row);
  samples_.push_back(sample);
  endInsertRows();
  emit sampleAdded();
}

void StatsHistoryModel::addAnswer(const GenerationDone& done) {
  if (done.usage.generated_tokens <= 0) return;  // nothing was generated: no latency to show
  Answer a;
  a.time_s = samples_.empty() ? 0 : samples_.back().time_s;
  a.ttft_ms = done.usage.ttft_ms;
  a.itl_p50_ms = done.usage.itl_p50_ms;
  a.itl_p95_ms = done.usage.itl_p95_ms;
  a.decode_tps = done.usage.decode_tps;
  a.generated_tokens = done.usage.generated_tokens;
  answers_.push_back(a);
  if (answers_.size() > kCapacity) answers_.pop_front();
  emit answerAdded();
}

void StatsHistoryModel::clear() {
  beginResetModel();
  samples_.clear();
  answers_.clear();
  endResetModel();
}

bool StatsHistoryModel::onDevice() const {
  return latest() && latest()->stats.memory.device_total > 0;
}

}  // namespace hearth::app
