#include "app/profiler_charts.h"

#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>

#include <algorithm>
#include <array>

namespace hearth::app {
namespace {

constexpr int kBarWidth = 2;  // px per step
constexpr int kTitleHeight = 14;

struct Part {
  double StepBreakdown::*field;
  QColor color;
};
// Bottom to top, in the step's order.
const std::array<Part, 5>& parts() {
  static const std::array<Part, 5> p{{{&StepBreakdown::scheduling_us, QColor(0x80, 0x80, 0x80)},
                                      {&StepBreakdown::busy_us, QColor(0x2e, 0x8b, 0x57)},
                                      {&StepBreakdown::idle_us, QColor(0xd2, 0x69, 0x1e)},
                                      {&StepBreakdown::other_us, QColor(0xc0, 0x39, 0x2b)},
                                      {&StepBreakdown::sampling_us, QColor(0x29, 0x80, 0xb9)}}};
  return p;
}

}  // namespace

QString breakdown_text(const StepBreakdown& b) {
  return QObject::tr("step %1 (%2 tokens): %3 ms: busy %4, idle %5, host wait %6, sampling %7, scheduling %8 ms")
      .arg(b.step)
      .arg(b.tokens)
      .arg(b.total_us() / 1e3, 0, 'f', 2)
      .arg(b.busy_us / 1e3, 0, 'f', 2)
      .arg(b.idle_us / 1e3, 0, 'f', 2)
      .arg(b.host_wait_us / 1e3, 0, 'f', 2)
      .arg(b.sampling_us / 1e3, 0, 'f', 3)
      .arg(b.scheduling_us / 1e3, 0, 'f', 3);
}

CellHistoryChart::CellHistoryChart(QWidget* parent) : QWidget(parent) {}

void CellHistoryChart::setSeries(const QString& title, std::vector<double> us) {
  title_ = title;
  us_ = std::move(us);
  update();
}

void CellHistoryChart::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  p.setPen(palette().text().color());
  if (us_.empty()) {
    p.drawText(rect(), Qt::AlignCenter, title_.isEmpty() ? tr("Click a cell for its history") : title_);
    return;
  }
  const double top = std::max(*std::max_element(us_.begin(), us_.end()), 1e-9);
  p.drawText(QRect(4, 0, width() - 8, kTitleHeight), Qt::AlignLeft | Qt::AlignVCenter,
             tr("%1: last %2 us, max %3 us").arg(title_).arg(us_.back(), 0, 'f', 1).arg(top, 0, 'f', 1));
  const QRectF plot(4, kTitleHeight + 2, width() - 8, height() - kTitleHeight - 6);
  const std::size_t n = us_.size();
  QPainterPath path;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = plot.left() + (n > 1 ? plot.width() * static_cast<double>(i) / static_cast<double>(n - 1) : 0.0);
    const double y = plot.bottom() - plot.height() * us_[i] / top;
    if (i == 0) {
      path.moveTo(x, y);
    } else {
      path.lineTo(x, y);
    }
  }
  p.setRenderHint(QPainter::Antialiasing);
  p.setPen(QPen(palette().highlight().color(), 1.5));
  p.drawPath(path);
}

StepTimeline::StepTimeline(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
}

void StepTimeline::setSteps(const std::deque<StepBreakdown>& steps) {
  steps_.assign(steps.begin(), steps.end());
  update();
}

int StepTimeline::firstShown() const {
  const int fit = std::max(1, width() / kBarWidth);
  return std::max(0, stepCount() - fit);
}

int StepTimeline::stepAt(int x) const {
  const int i = firstShown() + x / kBarWidth;
  return x >= 0 && i < stepCount() ? i : -1;
}

QString StepTimeline::stepText(int index) const {
  return breakdown_text(steps_[static_cast<std::size_t>(index)]);
}

void StepTimeline::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  if (steps_.empty()) {
    p.setPen(palette().text().color());
    p.drawText(rect(), Qt::AlignCenter, tr("Per-step timeline"));
    return;
  }
  const int first = firstShown();
  double top = 1e-9;
  for (int i = first; i < stepCount(); ++i) top = std::max(top, steps_[static_cast<std::size_t>(i)].total_us());
  const double scale = (height() - 2) / top;
  for (int i = first; i < stepCount(); ++i) {
    const StepBreakdown& b = steps_[static_cast<std::size_t>(i)];
    const int x = (i - first) * kBarWidth;
    double y = height();
    for (const Part& part : parts()) {
      const double h = b.*part.field * scale;
      p.fillRect(QRectF(x, y - h, kBarWidth, h), part.color);
      y -= h;
    }
  }
}

void StepTimeline::mouseMoveEvent(QMouseEvent* event) {
  const int i = stepAt(event->position().toPoint().x());
  if (i < 0) {
    QToolTip::hideText();
    return;
  }
  QToolTip::showText(event->globalPosition().toPoint(), stepText(i), this);
}

}  // namespace hearth::app
