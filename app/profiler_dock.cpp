#include "app/profiler_dock.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QSaveFile>
#include <QScrollArea>
#include <QToolButton>
#include <QVBoxLayout>

#include <limits>

#include "app/profiler_charts.h"
#include "app/profiler_heatmap.h"
#include "cli/profile_output.h"

namespace hearth::app {

ProfilerDock::ProfilerDock(QWidget* parent) : QDockWidget(tr("Profiler"), parent) {
  setObjectName(QStringLiteral("profilerDock"));
  auto* body = new QWidget;
  auto* layout = new QVBoxLayout(body);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->setSpacing(4);
  layout->addWidget(buildControls(body));
  summary_ = new QLabel(tr("Profiling is off"), body);
  summary_->setObjectName(QStringLiteral("profilerSummary"));
  summary_->setWordWrap(true);
  layout->addWidget(summary_);
  heat_map_ = new ProfilerHeatMap(body);
  heat_map_->setObjectName(QStringLiteral("profilerHeatMap"));
  layout->addWidget(heat_map_, 1);
  history_ = new CellHistoryChart(body);
  history_->setObjectName(QStringLiteral("profilerCellHistory"));
  layout->addWidget(history_);
  timeline_ = new StepTimeline(body);
  timeline_->setObjectName(QStringLiteral("profilerTimeline"));
  layout->addWidget(timeline_);
  breakdown_ = new QLabel(body);
  breakdown_->setObjectName(QStringLiteral("profilerBreakdown"));
  breakdown_->setWordWrap(true);
  layout->addWidget(breakdown_);
  overflow_label_ = new QLabel(body);
  overflow_label_->setObjectName(QStringLiteral("profilerOverflow"));
  overflow_label_->setWordWrap(true);
  overflow_label_->hide();
  layout->addWidget(overflow_label_);
  auto* scroll = new QScrollArea(this);  // fits a short window and a narrow dock
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setWidget(body);
  setWidget(scroll);
  connect(heat_map_, &ProfilerHeatMap::cellClicked, this, &ProfilerDock::showCell);
  connect(this, &QDockWidget::visibilityChanged, this, &ProfilerDock::updateActive);
}

QWidget* ProfilerDock::buildControls(QWidget* parent) {
  auto* controls = new QWidget(parent);
  auto* rows = new QVBoxLayout(controls);
  rows->setContentsMargins(0, 0, 0, 0);
  auto* first = new QHBoxLayout;
  enabled_ = new QCheckBox(tr("Profile"), controls);
  enabled_->setObjectName(QStringLiteral("profilerEnabled"));
  enabled_->setChecked(true);
  enabled_->setToolTip(tr("Time every kernel while the panel is open (CUDA runs without graphs meanwhile)"));
  freeze_ = new QCheckBox(tr("Freeze"), controls);
  freeze_->setObjectName(QStringLiteral("profilerFreeze"));
  overflow_ = new QCheckBox(tr("Overflow check"), controls);
  overflow_->setObjectName(QStringLiteral("profilerOverflowCheck"));
  overflow_->setToolTip(tr("Debug: scan every op's output for NaN, Inf and values beyond 95% of the FP16 range"));
  export_ = new QToolButton(controls);
  export_->setObjectName(QStringLiteral("profilerExport"));
  export_->setText(tr("Export"));
  export_->setPopupMode(QToolButton::InstantPopup);
  auto* menu = new QMenu(export_);
  menu->addAction(tr("Trace (Chrome / Perfetto)\u2026"), this, [this] { askExport(ExportFormat::kTrace); });
  menu->addAction(tr("Matrix as CSV\u2026"), this, [this] { askExport(ExportFormat::kCsv); });
  menu->addAction(tr("Matrix as JSON\u2026"), this, [this] { askExport(ExportFormat::kJson); });
  export_->setMenu(menu);
  for (QWidget* w : {static_cast<QWidget*>(enabled_), static_cast<QWidget*>(freeze_), static_cast<QWidget*>(overflow_)})
    first->addWidget(w);
  first->addStretch(1);
  first->addWidget(export_);
  auto* second = new QHBoxLayout;
  measure_ = new QComboBox(controls);
  measure_->setObjectName(QStringLiteral("profilerMeasure"));
  measure_->addItem(tr("time"));
  measure_->addItem(tr("share of the step"));
  measure_->addItem(tr("fraction of the ceiling"));
  normalization_ = new QComboBox(controls);
  normalization_->setObjectName(QStringLiteral("profilerNormalization"));
  normalization_->addItem(tr("min-max (whole matrix)"));
  normalization_->addItem(tr("z-score (within each layer)"));
  for (QComboBox* box : {measure_, normalization_}) {
    box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    box->setMinimumContentsLength(8);
    second->addWidget(box, 1);
  }
  auto* third = new QHBoxLayout;
  auto* target_label = new QLabel(tr("Latency target"), controls);
  latency_metric_ = new QComboBox(controls);
  latency_metric_->setObjectName(QStringLiteral("latencyMetric"));
  latency_metric_->addItem(tr("ITL p99"));
  latency_metric_->addItem(tr("TTFT p99"));
  latency_target_ = new QDoubleSpinBox(controls);
  latency_target_->setObjectName(QStringLiteral("latencyTarget"));
  latency_target_->setRange(0, 600000);
  latency_target_->setDecimals(1);
  latency_target_->setSuffix(tr(" ms"));
  latency_target_->setSpecialValueText(tr("off"));
  latency_target_->setToolTip(
      tr("When the p99 of the last answers stays above it, Hearth suggests a lighter "
         "configuration (it never switches on its own)"));
  third->addWidget(target_label);
  third->addWidget(latency_metric_);
  third->addWidget(latency_target_, 1);
  rows->addLayout(first);
  rows->addLayout(second);
  rows->addLayout(third);
  const auto target_changed = [this] {
    emit latencyTargetChanged(latency_metric_->currentIndex(), latency_target_->value());
  };
  connect(latency_metric_, &QComboBox::currentIndexChanged, this, target_changed);
  connect(latency_target_, &QDoubleSpinBox::editingFinished, this, target_changed);
  connect(enabled_, &QCheckBox::toggled, this, &ProfilerDock::updateActive);
  connect(freeze_, &QCheckBox::toggled, this, [this](bool on) {
    if (!on) refreshViews();
  });
  connect(overflow_, &QCheckBox::toggled, this, &ProfilerDock::overflowCheckToggled);
  connect(measure_, &QComboBox::currentIndexChanged, this, [this](int i) {
    heat_map_->setMeasure(i == 1   ? ProfilerHeatMap::Measure::kStepShare
                          : i == 2 ? ProfilerHeatMap::Measure::kCeilingFraction
                                   : ProfilerHeatMap::Measure::kTime);
  });
  connect(normalization_, &QComboBox::currentIndexChanged, this, [this](int i) {
    heat_map_->setNormalization(i == 1 ? ProfilerHeatMap::Normalization::kZScore
                                       : ProfilerHeatMap::Normalization::kMinMax);
  });
  return controls;
}

bool ProfilerDock::frozen() const {
  return freeze_->isChecked();
}

void ProfilerDock::setFrozen(bool frozen) {
  freeze_->setChecked(frozen);
}

void ProfilerDock::updateActive() {
  const bool active = enabled_->isChecked() && !isHidden();
  if (active == active_) return;
  active_ = active;
  if (!active) summary_->setText(tr("Profiling is off"));
  emit profilingChanged(active);
}

void ProfilerDock::applyUpdate(const ProfileUpdate& update) {
  data_.apply(update);
  if (!frozen()) refreshViews();
}

void ProfilerDock::setReport(const ProfileReport& report) {
  ProfileUpdate whole;
  whole.report = std::make_shared<const ProfileReport>(report);
  // Each whole report is a window of its own: kept steps are not mixed with the last one's.
  whole.window = std::numeric_limits<std::uint64_t>::max() - (whole_reports_++ % 2);
  applyUpdate(whole);
}

void ProfilerDock::refreshViews() {
  const ProfileReport& r = data_.report();
  heat_map_->setReport(r);
  const double steps = r.steps > 0 ? static_cast<double>(r.steps) : 1.0;
  QString text = tr("%1 steps; per step: forward %2 ms, host wait %3 ms, GPU idle %4 ms, sampling %5 ms")
                     .arg(r.steps)
                     .arg(r.forward_us / steps / 1e3, 0, 'f', 2)
                     .arg(r.host_wait_us / steps / 1e3, 0, 'f', 2)
                     .arg(r.gpu_idle_us / steps / 1e3, 0, 'f', 2)
                     .arg(r.sampling_us / steps / 1e3, 0, 'f', 3);
  if (r.ceilings.bytes_per_s > 0 || r.ceilings.flops_per_s > 0) {
    text += tr("\nCeilings: %1 GB/s, %2 GFLOP/s")
                .arg(r.ceilings.bytes_per_s / 1e9, 0, 'f', 1)
                .arg(r.ceilings.flops_per_s / 1e9, 0, 'f', 1);
    summary_->setToolTip(QString::fromStdString(r.ceilings.source));
  }
  summary_->setText(text);
  timeline_->setSteps(data_.steps());
  breakdown_->setText(data_.steps().empty() ? QString() : breakdown_text(data_.steps().back()));
  if (heat_map_->selectedRow() >= 0) showCell(heat_map_->selectedRow(), heat_map_->selectedColumn());
}

void ProfilerDock::showCell(int row, int column) {
  const KernelKind kind = heat_map_->columnKind(column);
  history_->setSeries(tr("layer %1, %2").arg(row).arg(QString::fromUtf8(kernel_kind_name(kind))),
                      data_.cellHistory(row, kind));
}

void ProfilerDock::setOverflowCheck(bool on) {
  const QSignalBlocker block(overflow_);
  overflow_->setChecked(on);
  if (!on) overflow_label_->hide();
}

void ProfilerDock::setLatencyTarget(int metric, double ms) {
  const QSignalBlocker block_metric(latency_metric_), block_target(latency_target_);
  latency_metric_->setCurrentIndex(metric == 1 ? 1 : 0);
  latency_target_->setValue(ms);
}

void ProfilerDock::showOverflow(const OverflowFinding& f) {
  overflow_label_->setText(tr("Overflow: %1 at layer %2, op %3, max |x| %4, token position %5")
                               .arg(QString::fromStdString(f.what))
                               .arg(f.layer)
                               .arg(QString::fromStdString(f.op))
                               .arg(f.max_abs, 0, 'g', 6)
                               .arg(f.position));
  overflow_label_->show();
}

bool ProfilerDock::exportTo(ExportFormat format, const QString& path, QString* error) const {
  const ProfileReport r = data_.exportReport();
  std::string text;
  switch (format) {
    case ExportFormat::kTrace:
      text = cli::trace_json(r).dump();
      break;
    case ExportFormat::kCsv:
      text = cli::matrix_csv(r);
      break;
    case ExportFormat::kJson:
      text = cli::profile_json(r).dump(1);
      break;
  }
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(text.data(), static_cast<qint64>(text.size())) < 0 ||
      !file.commit()) {
    if (error) *error = file.errorString();
    return false;
  }
  return true;
}

void ProfilerDock::askExport(ExportFormat format) {
  const QString filter = format == ExportFormat::kCsv ? tr("CSV (*.csv)") : tr("JSON (*.json)");
  const QString name = format == ExportFormat::kTrace ? QStringLiteral("hearth-trace.json")
                       : format == ExportFormat::kCsv ? QStringLiteral("hearth-profile.csv")
                                                      : QStringLiteral("hearth-profile.json");
  const QString path = QFileDialog::getSaveFileName(this, tr("Export the profile"), name, filter);
  if (path.isEmpty()) return;
  QString error;
  if (!exportTo(format, path, &error)) {
    QMessageBox::warning(this, tr("Export the profile"), tr("Could not write %1: %2").arg(path, error));
  }
}

}  // namespace hearth::app
