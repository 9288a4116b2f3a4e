#include "app/profiler_heatmap.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

#include "engine/metrics/roofline.h"

namespace hearth::app {
namespace {

constexpr int kLabelWidth = 28;    // px: the layer numbers
constexpr int kHeaderHeight = 20;  // px: the kind names
constexpr int kCellHeight = 14;
constexpr int kMinCellWidth = 40;

// Cold (dark blue) to hot (red) through yellow.
QColor ramp(double t) {
  t = std::clamp(t, 0.0, 1.0);
  return QColor::fromHsvF(static_cast<float>((1.0 - t) * 0.66), 0.85f, static_cast<float>(0.55 + 0.45 * t));
}

// Short column titles: the cells are narrow.
QString short_name(KernelKind k) {
  switch (k) {
    case KernelKind::kKvStore:
      return QStringLiteral("kv");
    case KernelKind::kAttention:
      return QStringLiteral("attn");
    case KernelKind::kActivation:
      return QStringLiteral("act");
    case KernelKind::kElementwise:
      return QStringLiteral("elem");
    default:
      return QString::fromUtf8(kernel_kind_name(k));
  }
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
  forward_us_ = report.forward_us;
  ceilings_ = report.ceilings;
  const std::size_t n = static_cast<std::size_t>(rows_) * kinds_.size();
  us_.assign(n, 0.0);
  bytes_.assign(n, 0.0);
  flops_.assign(n, 0.0);
  const std::size_t full = static_cast<std::size_t>(rows_) * kKernelKinds;
  const bool timed = report.matrix_us.size() == full;
  const bool costed = report.matrix_bytes.size() == full && report.matrix_flops.size() == full;
  for (int r = 0; r < rows_ && timed; ++r) {
    for (int c = 0; c < columns(); ++c) {
      us_[index(r, c)] = report.cell(r, kinds_[static_cast<std::size_t>(c)]);
      if (!costed) continue;
      bytes_[index(r, c)] = report.cell_bytes(r, kinds_[static_cast<std::size_t>(c)]);
      flops_[index(r, c)] = report.cell_flops(r, kinds_[static_cast<std::size_t>(c)]);
    }
  }
  if (selected_row_ >= rows_) selected_row_ = selected_column_ = -1;
  recompute();
  updateGeometry();
}

void ProfilerHeatMap::recompute() {
  values_.resize(us_.size());
  for (std::size_t i = 0; i < us_.size(); ++i) {
    switch (measure_) {
      case Measure::kTime:
        values_[i] = us_[i];
        break;
      case Measure::kStepShare:
        values_[i] = forward_us_ > 0 ? us_[i] / forward_us_ : 0.0;
        break;
      case Measure::kCeilingFraction:
        values_[i] = metrics::achieved_rate(bytes_[i], flops_[i], us_[i], ceilings_).ceiling_fraction;
        break;
    }
  }
  update();
}

void ProfilerHeatMap::setNormalization(Normalization n) {
  normalization_ = n;
  update();
}

void ProfilerHeatMap::setMeasure(Measure m) {
  measure_ = m;
  recompute();
}

double ProfilerHeatMap::value(int row, int column) const {
  return values_[index(row, column)];
}

double ProfilerHeatMap::microseconds(int row, int column) const {
  return us_[index(row, column)];
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
  for (int c = 0; c < columns(); ++c) layer += microseconds(row, c);
  const double us = microseconds(row, column);
  const double per_step = steps_ > 0 ? us / static_cast<double>(steps_) : 0.0;
  const metrics::AchievedRate rate =
      metrics::achieved_rate(bytes_[index(row, column)], flops_[index(row, column)], us, ceilings_);
  QString text = tr("layer %1, %2: %3 ms over %4 steps (%5 us per step), %6% of the layer, %7% of the forward")
                     .arg(row)
                     .arg(QString::fromUtf8(kernel_kind_name(columnKind(column))))
                     .arg(us / 1e3, 0, 'f', 3)
                     .arg(steps_)
                     .arg(per_step, 0, 'f', 1)
                     .arg(layer > 0 ? 100.0 * us / layer : 0.0, 0, 'f', 1)
                     .arg(forward_us_ > 0 ? 100.0 * us / forward_us_ : 0.0, 0, 'f', 1);
  text += tr("\n%1 GB/s, %2 GFLOP/s").arg(rate.bytes_per_s / 1e9, 0, 'f', 2).arg(rate.flops_per_s / 1e9, 0, 'f', 2);
  if (ceilings_.bytes_per_s > 0 || ceilings_.flops_per_s > 0) {
    text += tr(": %1% of the bandwidth ceiling (%2 GB/s), %3% of the compute ceiling (%4 GFLOP/s)")
                .arg(100.0 * rate.bandwidth_fraction, 0, 'f', 1)
                .arg(ceilings_.bytes_per_s / 1e9, 0, 'f', 1)
                .arg(100.0 * rate.compute_fraction, 0, 'f', 1)
                .arg(ceilings_.flops_per_s / 1e9, 0, 'f', 1);
  }
  return text;
}

void ProfilerHeatMap::select(int row, int column) {
  selected_row_ = row;
  selected_column_ = column;
  update();
}

QSize ProfilerHeatMap::sizeHint() const {
  return {kLabelWidth + columns() * kMinCellWidth, kHeaderHeight + std::max(rows_, 1) * kCellHeight};
}

QSize ProfilerHeatMap::minimumSizeHint() const {
  return {kLabelWidth + columns() * 16, kHeaderHeight + std::max(rows_, 1) * 4};
}

QRect ProfilerHeatMap::cellRect(int row, int column) const {
  const int w = std::max(1, (width() - kLabelWidth) / std::max(columns(), 1));
  const int h = std::max(1, (height() - kHeaderHeight) / std::max(rows_, 1));
  return {kLabelWidth + column * w, kHeaderHeight + row * h, w, h};
}

QPoint ProfilerHeatMap::cellAt(const QPoint& pos) const {
  const int w = std::max(1, (width() - kLabelWidth) / std::max(columns(), 1));
  const int h = std::max(1, (height() - kHeaderHeight) / std::max(rows_, 1));
  const int c = pos.x() < kLabelWidth ? -1 : (pos.x() - kLabelWidth) / w;
  const int r = pos.y() < kHeaderHeight ? -1 : (pos.y() - kHeaderHeight) / h;
  if (r < 0 || r >= rows_ || c < 0 || c >= columns()) return {-1, -1};
  return {c, r};
}

void ProfilerHeatMap::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  p.setPen(palette().text().color());
  for (int c = 0; c < columns(); ++c) {
    const QRect cell = cellRect(0, c);
    p.drawText(QRect(cell.x(), 0, cell.width(), kHeaderHeight), Qt::AlignCenter,
               short_name(kinds_[static_cast<std::size_t>(c)]));
  }
  for (int r = 0; r < rows_; ++r) {
    const QRect first = cellRect(r, 0);
    p.setPen(palette().text().color());
    if (first.height() >= 9 || r % 5 == 0) {
      p.drawText(QRect(0, first.y(), kLabelWidth - 4, std::max(first.height(), 10)), Qt::AlignRight | Qt::AlignVCenter,
                 QString::number(r));
    }
    for (int c = 0; c < columns(); ++c) p.fillRect(cellRect(r, c).adjusted(0, 0, -1, -1), ramp(normalized(r, c)));
  }
  if (selected_row_ >= 0 && selected_column_ >= 0) {
    p.setPen(QPen(palette().text().color(), 2));
    p.setBrush(Qt::NoBrush);
    p.drawRect(cellRect(selected_row_, selected_column_).adjusted(1, 1, -2, -2));
  }
}

void ProfilerHeatMap::mouseMoveEvent(QMouseEvent* event) {
  const QPoint cell = cellAt(event->position().toPoint());
  if (cell.x() < 0) {
    QToolTip::hideText();
    return;
  }
  QToolTip::showText(event->globalPosition().toPoint(), cellText(cell.y(), cell.x()), this);
}

void ProfilerHeatMap::mousePressEvent(QMouseEvent* event) {
  const QPoint cell = cellAt(event->position().toPoint());
  if (cell.x() < 0 || event->button() != Qt::LeftButton) return QWidget::mousePressEvent(event);
  select(cell.y(), cell.x());
  emit cellClicked(cell.y(), cell.x());
}

}  // namespace hearth::app
