#include "app/profiler_dock.h"

#include <QComboBox>
#include <QLabel>
#include <QScrollArea>
#include <QVBoxLayout>

#include "app/profiler_heatmap.h"

namespace hearth::app {

ProfilerDock::ProfilerDock(QWidget* parent) : QDockWidget(tr("Profiler"), parent) {
  setObjectName(QStringLiteral("profilerDock"));
  auto* body = new QWidget(this);
  auto* layout = new QVBoxLayout(body);
  normalization_ = new QComboBox(body);
  normalization_->setObjectName(QStringLiteral("profilerNormalization"));
  normalization_->addItem(tr("min-max (whole matrix)"));
  normalization_->addItem(tr("z-score (within each layer)"));
  summary_ = new QLabel(tr("Profiling is off"), body);
  summary_->setObjectName(QStringLiteral("profilerSummary"));
  heat_map_ = new ProfilerHeatMap(body);
  heat_map_->setObjectName(QStringLiteral("profilerHeatMap"));
  auto* scroll = new QScrollArea(body);
  scroll->setWidget(heat_map_);
  scroll->setWidgetResizable(true);
  layout->addWidget(normalization_);
  layout->addWidget(summary_);
  layout->addWidget(scroll, 1);
  setWidget(body);
  connect(normalization_, &QComboBox::currentIndexChanged, this, [this](int i) {
    heat_map_->setNormalization(i == 1 ? ProfilerHeatMap::Normalization::kZScore
                                       : ProfilerHeatMap::Normalization::kMinMax);
  });
}

void ProfilerDock::setReport(const ProfileReport& report) {
  heat_map_->setReport(report);
  const double steps = report.steps > 0 ? static_cast<double>(report.steps) : 1.0;
  summary_->setText(tr("%1 steps; per step: forward %2 ms, host wait %3 ms, GPU idle %4 ms, sampling %5 ms")
                        .arg(report.steps)
                        .arg(report.forward_us / steps / 1e3, 0, 'f', 2)
                        .arg(report.host_wait_us / steps / 1e3, 0, 'f', 2)
                        .arg(report.gpu_idle_us / steps / 1e3, 0, 'f', 2)
                        .arg(report.sampling_us / steps / 1e3, 0, 'f', 2));
}

}  // namespace hearth::app
