// The profiler's heat map (issue 19): layers (rows) x kernel kinds (columns)
// of a ProfileReport (hearth/profile.h), each cell the microseconds summed
// over the profiled steps, coloured after one of two normalisations: min-max
// over the whole matrix (to compare layers and models), or z-score within
// each layer (to spot the kernel that is out of line in its layer). Hovering
// a cell shows its numbers. Columns are the kinds a layer runs (the embedding
// and sampling live outside the layers).
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

  explicit ProfilerHeatMap(QWidget* parent = nullptr);

  void setReport(const ProfileReport& report);
  void setNormalization(Normalization n);
  Normalization normalization() const { return normalization_; }

  int rows() const { return rows_; }
  int columns() const { return static_cast<int>(kinds_.size()); }
  KernelKind columnKind(int column) const { return kinds_[static_cast<std::size_t>(column)]; }
  double value(int row, int column) const;  // microseconds
  // In [0, 1] for the colour: min-max over the matrix, or z in [-3, 3] mapped to [0, 1].
  double normalized(int row, int column) const;
  // What hovering (row, column) shows.
  QString cellText(int row, int column) const;
  QSize sizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;

 private:
  QRect cellRect(int row, int column) const;
  int rowAt(int y) const;
  int columnAt(int x) const;

  std::vector<KernelKind> kinds_;
  std::vector<double> values_;  // [rows_][kinds_.size()]
  int rows_ = 0;
  std::int64_t steps_ = 0;
  Normalization normalization_ = Normalization::kMinMax;
};

}  // namespace hearth::app
