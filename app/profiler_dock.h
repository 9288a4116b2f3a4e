// The profiler dock (issue 19): the layers x kernels heat map of the engine's
// profile window, its normalisation switch (min-max / z-score), and the
// step's breakdown (forward, host wait, GPU idle, sampling). Fed a
// ProfileReport (Engine::profile(), taken off the UI thread) through setReport.
#pragma once

#include <QDockWidget>

#include "hearth/profile.h"

class QComboBox;
class QLabel;

namespace hearth::app {

class ProfilerHeatMap;

class ProfilerDock : public QDockWidget {
  Q_OBJECT

 public:
  explicit ProfilerDock(QWidget* parent = nullptr);
  ProfilerHeatMap* heatMap() const { return heat_map_; }

 public slots:
  void setReport(const hearth::ProfileReport& report);

 private:
  ProfilerHeatMap* heat_map_ = nullptr;
  QComboBox* normalization_ = nullptr;
  QLabel* summary_ = nullptr;
};

}  // namespace hearth::app
