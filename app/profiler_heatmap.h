// The profiler's heat map (issue 19): layers (rows) x kernel kinds (columns)
// of a ProfileReport (hearth/profile.h), each cell summed over the profiled
// steps and coloured by a chosen measure: its time, its share of the forward
// pass, or its fraction of the device's ceiling (the achieved bandwidth or
// FLOP rate, whichever is closer to its roof: engine/metrics/roofline.h).
// Two normalisations: min-max over the whole matrix (to compare layers and
// models) or z-score within each layer (to spot the kernel that is out of
// line in its layer). Hovering a cell shows its numbers; clicking selects it
// (cellClicked: the dock shows its history). Columns are the kinds a layer
// runs (the embedding and sampling live outside the layers).
#pragma once

#include <QString>
#include <QWidget>

#include <vector>

#include "hearth/profile.h"

namespace hearth::app {

class ProfilerHeatMap : public QWidget {
  Q_OBJECT

 public:
  enum class Normalization { kMinMax, kZScore };
  enum class Measure { kTime, kStepShare, kCeilingFraction };

  explicit ProfilerHeatMap(QWidget* parent = nullptr);

  void setReport(const ProfileReport& report);
  void setNormalization(Normalization n);
  Normalization normalization() const { return normalization_; }
  void setMeasure(Measure m);
  Measure measure() const { return measure_; }

  int rows() const { return rows_; }
  int columns() const { return static_cast<int>(kinds_.size()); }
  KernelKind columnKind(int column) const { return kinds_[static_cast<std::size_t>(column)]; }
  // The measure's value: microseconds (kTime), a fraction of the forward
  // (kStepShare) or of the ceiling (kCeilingFraction).
  double value(int row, int column) const;
  double microseconds(int row, int column) const;
  // In [0, 1] for the colour: min-max over the matrix, or z in [-3, 3] mapped to [0, 1].
  double normalized(int row, int column) const;
  // What hovering (row, column) shows.
  QString cellText(int row, int column) const;
  // The clicked cell (-1, -1 when none); kept while the report changes.
  int selectedRow() const { return selected_row_; }
  int selectedColumn() const { return selected_column_; }
  void select(int row, int column);
  // The cell at a point of the widget (-1 outside the cells).
  QPoint cellAt(const QPoint& pos) const;
  QRect cellRect(int row, int column) const;
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 signals:
  void cellClicked(int row, int column);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;

 private:
  std::size_t index(int row, int column) const {
    return static_cast<std::size_t>(row) * kinds_.size() + static_cast<std::size_t>(column);
  }

  std::vector<KernelKind> kinds_;
  std::vector<double> us_, bytes_, flops_;  // [rows_][kinds_.size()]
  std::vector<double> values_;              // the measure's, same shape
  DeviceCeilings ceilings_;
  double forward_us_ = 0;
  int rows_ = 0;
  std::int64_t steps_ = 0;
  int selected_row_ = -1, selected_column_ = -1;
  Normalization normalization_ = Normalization::kMinMax;
  Measure measure_ = Measure::kTime;

  void recompute();
};

}  // namespace hearth::app
