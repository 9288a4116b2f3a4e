// The profiler panel's two small charts (issue 19), drawn with QPainter:
// the selected heat-map cell's duration in each step (CellHistoryChart), and
// the per-step timeline below the heat map (StepTimeline): one bar per step,
// its height the step's time, split into scheduling, device busy, device
// idle, the rest of the forward (launches, host waits) and sampling.
#pragma once

#include <QString>
#include <QWidget>

#include <deque>
#include <vector>

#include "app/profiler_data.h"

namespace hearth::app {

class CellHistoryChart : public QWidget {
  Q_OBJECT

 public:
  explicit CellHistoryChart(QWidget* parent = nullptr);
  // Microseconds per step, oldest first; `title` names the cell.
  void setSeries(const QString& title, std::vector<double> us);
  const std::vector<double>& series() const { return us_; }
  const QString& title() const { return title_; }
  QSize sizeHint() const override { return {260, 64}; }
  QSize minimumSizeHint() const override { return {80, 48}; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  QString title_;
  std::vector<double> us_;
};

class StepTimeline : public QWidget {
  Q_OBJECT

 public:
  explicit StepTimeline(QWidget* parent = nullptr);
  // The newest steps that fit are drawn (2 px each), oldest on the left.
  void setSteps(const std::deque<StepBreakdown>& steps);
  int stepCount() const { return static_cast<int>(steps_.size()); }
  // The step under x (-1: none); hovering shows its breakdown.
  int stepAt(int x) const;
  QString stepText(int index) const;
  QSize sizeHint() const override { return {260, 64}; }
  QSize minimumSizeHint() const override { return {80, 40}; }

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;

 private:
  int firstShown() const;
  std::vector<StepBreakdown> steps_;
};

// One line for a step's breakdown (the panel's label, the timeline's tooltip).
QString breakdown_text(const StepBreakdown& b);

}  // namespace hearth::app
