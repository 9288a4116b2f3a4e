// The profiler dock (issue 19): while a generation runs with profiling on,
// the engine's live profile window (ProfileUpdate from the EngineWorker, 4 Hz)
// fills the layers x kernels heat map (measure: time, share of the step or
// fraction of the device's ceiling; min-max or z-score), the selected cell's
// history, the per-step timeline and the last step's breakdown. Freeze stops
// the views (the data keeps coming, so unfreezing loses nothing); Export
// writes a Chrome / Perfetto trace of the kept steps, or the matrix as CSV or
// JSON (cli/profile_output.h, the same as hearth-cli profile's). Profiling
// runs while the dock is open and "Profile" is ticked (profilingChanged); the
// overflow check is the settings' debug option (overflowCheckToggled), and
// the latency target (latencyTargetChanged) the one the advice holds answers to.
#pragma once

#include <QDockWidget>
#include <QString>

#include "app/profiler_data.h"
#include "hearth/profile.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QToolButton;

namespace hearth::app {

class CellHistoryChart;
class ProfilerHeatMap;
class StepTimeline;

class ProfilerDock : public QDockWidget {
  Q_OBJECT

 public:
  explicit ProfilerDock(QWidget* parent = nullptr);
  ProfilerHeatMap* heatMap() const { return heat_map_; }
  const ProfilerData& data() const { return data_; }
  // Open and ticked: the engine should profile.
  bool profilingActive() const { return active_; }
  bool frozen() const;

  enum class ExportFormat { kTrace, kCsv, kJson };
  // Writes the collected window; false with `error` set when it cannot.
  bool exportTo(ExportFormat format, const QString& path, QString* error = nullptr) const;

 public slots:
  void applyUpdate(const hearth::app::ProfileUpdate& update);
  void setReport(const hearth::ProfileReport& report);  // a whole window at once
  void setOverflowCheck(bool on);                       // shows the setting (no signal)
  // The latency target's controls (no signal): metric 0 ITL p99, 1 TTFT p99; ms 0: off.
  void setLatencyTarget(int metric, double ms);
  void showOverflow(const hearth::OverflowFinding& finding);
  void setFrozen(bool frozen);

 signals:
  void profilingChanged(bool active);
  void overflowCheckToggled(bool on);
  void latencyTargetChanged(int metric, double ms);

 private:
  QWidget* buildControls(QWidget* parent);
  void refreshViews();
  void showCell(int row, int column);
  void updateActive();
  void askExport(ExportFormat format);

  ProfilerData data_;
  std::uint64_t whole_reports_ = 0;  // setReport's windows (each one replaces the last)
  ProfilerHeatMap* heat_map_ = nullptr;
  CellHistoryChart* history_ = nullptr;
  StepTimeline* timeline_ = nullptr;
  QCheckBox* enabled_ = nullptr;
  QCheckBox* freeze_ = nullptr;
  QCheckBox* overflow_ = nullptr;
  QComboBox* measure_ = nullptr;
  QComboBox* normalization_ = nullptr;
  QComboBox* latency_metric_ = nullptr;
  QDoubleSpinBox* latency_target_ = nullptr;
  QToolButton* export_ = nullptr;
  QLabel* summary_ = nullptr;
  QLabel* breakdown_ = nullptr;
  QLabel* overflow_label_ = nullptr;
  bool active_ = false;
};

}  // namespace hearth::app
