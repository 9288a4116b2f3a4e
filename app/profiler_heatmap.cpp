#include "app/profiler_heatmap.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace hearth::app {
namespace {

constexpr int kLabelWidth = 36;    // px: the layer numbers
constexpr int kHeaderHeight = 22;  // px: the kind names
constexpr int kCellHeight = 14;
constexpr int kMinCellWidth = 56;

// Cold (dark blue) to hot (red) through yellow.
QColor ramp(double t) {
  t = std::clamp(t, 0.0, 1.0);
  return QColor::fromHsvF(static_cast<float>((1.0 - t) * 0.66), 0.85f, static_cast<float>(0.55 + 0.45 * t));
}

}  // namespace

ProfilerHeatMap::ProfilerHeatMap(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  kinds_ = {KernelKind::kNorm,      KernelKind::kMatmul,     KernelKind::kRope,       KernelKind::kKvStore,
            KernelKind::kAttention, KernelKind::kActivation, KernelKind::kElementwise};
}

void ProfilerHeatMap::setReport(const ProfileReport& report) {
  rows_ = report.n_layer;
  steps_ = report.steps;
  values_.assign(static_cast<std::size_t>(rows_) * kinds_.size(), 0.0);
  if (report.matrix_us.size() == static_cast<std::size_t>(rows_) * kKernelKinds) {
    for (int r = 0; r < rows_; ++r) {
      for (std::size_t c = 0; c < kinds_.size(); ++c)
        values_[static_cast<std::size_t>(r) * kinds_.size() + c] = report.cell(r, kinds_[c]);
    }
  }
  updateGeometry();
  update();
}

void ProfilerHeatMap::setNormalization(Normalization n) {
  normalization_ = n;
  update();
}

double ProfilerHeatMap::value(int row, int column) const {
  return values_[static_cast<std::size_t>(row) * kinds_.size() + static_cast<std::size_t>(column)];
}

double ProfilerHeatMap::normalized(int row, int column) const {
  const double v = value(row, column);
  if (normalization_ == Normalization::kMinMax) {
    const auto [lo, hi] = std::minmax_element(values_.begin(), values_.end());
    return *hi > *lo ? (v - *lo) / (*hi - *lo) : 0.0;
  }
  double mean = 0, m2 = 0;
  for (int c = 0; c < columns(); ++c) mean += value(row, c);
  mean /= columns();
  for (int c = 0; c < columns(); ++c) m2 += (value(row, c) - mean) * (value(row, c) - mean);
  const double sd = std::sqrt(m2 / columns());
  const double z = sd > 0 ? (v - mean) / sd : 0.0;
  return (std::clamp(z, -3.0, 3.0) + 3.0) / 6.0;
}

QString ProfilerHeatMap::cellText(int row, int column) const {
  double layer = 0;
  for (int c = 0; c < columns(); ++c) layer += value(row, c);
  const double v = value(row, column);
  const double per_step = steps_ > 0 ? v / static_cast<double>(steps_) : 0.0;
  return tr("layer %1, %2: %3 ms over %4 steps (%5 us per step), %6% of the layer")
      .arg(row)
      .arg(QString::fromUtf8(kernel_kind_name(columnKind(column))))
      .arg(v / 1e3, 0, 'f', 3)
      .arg(steps_)
      .arg(per_step, 0, 'f', 1)
      .arg(layer > 0 ? 100.0 * v / layer : 0.0, 0, 'f', 1);
}

QSize ProfilerHeatMap::sizeHint() const {
  return {kLabelWidth + columns() * kMinCellWidth, kHeaderHeight + std::max(rows_, 1) * kCellHeight};
}

QRect ProfilerHeatMap::cellRect(int row, int column) const {
  const int w = std::max(1, (width() - kLabelWidth) / std::max(columns(), 1));
  const int h = std::max(1, (height() - kHeaderHeight) / std::max(rows_, 1));
  return {kLabelWidth + column * w, kHeaderHeight + row * h, w, h};
}

int ProfilerHeatMap::rowAt(int y) const {
  const int h = std::max(1, (height() - kHeaderHeight) / std::max(rows_, 1));
  const int r = y < kHeaderHeight ? -1 : (y - kHeaderHeight) / h;
  return r < rows_ ? r : -1;
}

int ProfilerHeatMap::columnAt(int x) const {
  const int w = std::max(1, (width() - kLabelWidth) / std::max(columns(), 1));
  const int c = x < kLabelWidth ? -1 : (x - kLabelWidth) / w;
  return c < columns() ? c : -1;
}

void ProfilerHeatMap::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  p.setPen(palette().text().color());
  for (int c = 0; c < columns(); ++c) {
    const QRect cell = cellRect(0, c);
    p.drawText(QRect(cell.x(), 0, cell.width(), kHeaderHeight), Qt::AlignCenter,
               QString::fromUtf8(kernel_kind_name(kinds_[static_cast<std::size_t>(c)])));
  }
  for (int r = 0; r < rows_; ++r) {
    const QRect first = cellRect(r, 0);
    p.setPen(palette().text().color());
    p.drawText(QRect(0, first.y(), kLabelWidth - 4, first.height()), Qt::AlignRight | Qt::AlignVCenter,
               QString::number(r));
    for (int c = 0; c < columns(); ++c) p.fillRect(cellRect(r, c).adjusted(0, 0, -1, -1), ramp(normalized(r, c)));
  }
}

void ProfilerHeatMap::mouseMoveEvent(QMouseEvent* event) {
  const QPoint pos = event->position().toPoint();
  const int r = rowAt(pos.y()), c = columnAt(pos.x());
  if (r < 0 || c < 0) {
    QToolTip::hideText();
    return;
  }
  QToolTip::showText(event->globalPosition().toPoint(), cellText(r, c), this);
}

}  // namespace hearth::app
