// The performance history behind the charts: one row per stats sample (the
// last kCapacity of them, oldest first), one column per plotted series; and
// the time to first token of each answer.
#pragma once

#include <QAbstractTableModel>

#include <deque>
#include <vector>

#include "app/engine_types.h"

namespace hearth::app {

class StatsHistoryModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  static constexpr int kCapacity = 240;  // 60 s at the worker's 4 Hz

  enum Column {
    kTimeS,
    kDecodeTps,
    kPrefillTps,
    kWeightsMiB,  // memory, MiB: weights, KV pool, workspace, the rest of the process
    kKvPoolMiB,
    kWorkspaceMiB,
    kOtherMiB,       // RSS (CPU) or device used (GPU) beyond the three above; never negative
    kDeviceFreeMiB,  // GPU only; 0 on the CPU
    kKvUsed,         // blocks
    kKvCached,
    kKvFree,
    kPrefixHitPct,
    kTtftP50Ms,
    kItlP50Ms,
    kItlP95Ms,
    kItlP99Ms,
    kColumnCount
  };

  struct Answer {
    double time_s = 0;  // when it finished, on the samples' clock
    double ttft_ms = 0;
    double itl_p50_ms = 0;
    double itl_p95_ms = 0;
    double decode_tps = 0;  // the answer's own (Usage::decode_tps), as its stats line shows it
    int generated_tokens = 0;
  };

  explicit StatsHistoryModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

  void append(const StatsSample& sample);
  void addAnswer(const GenerationDone& done);
  void clear();

  double value(int row, Column column) const;
  const std::deque<Answer>& answers() const { return answers_; }
  const StatsSample* latest() const { return samples_.empty() ? nullptr : &samples_.back(); }
  bool onDevice() const;  // the latest sample reports device memory

 signals:
  void sampleAdded();
  void answerAdded();

 private:
  std::deque<StatsSample> samples_;
  std::deque<Answer> answers_;  // the last kCapacity answers
};

}  // namespace hearth::app
