#include "app/perf_dock.h"

#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QColor>
#include <QLabel>
#include <QLineSeries>
#include <QScatterSeries>
#include <QScrollArea>
#include <QVBoxLayout>
#include <QValueAxis>
#include <QXYSeries>

#include <algorithm>
#include <array>
#include <cmath>

#include "app/stats_history_model.h"

namespace hearth::app {

using Col = StatsHistoryModel::Column;

double nice_axis_top(double y_max) {
  const double wanted = std::max(y_max, 0.0) * 1.15 / (kAxisTicks - 1);  // per step
  if (!std::isfinite(wanted)) return kAxisTicks - 1;
  double step = 1;
  for (double scale = 1; step < wanted; scale *= 10) {
    for (const double m : {1.0, 2.0, 5.0}) {
      step = m * scale;
      if (step >= wanted) break;
    }
  }
  return step * (kAxisTicks - 1);
}

QColor series_color(int index) {
  // Distinct on the light and the dark background alike.
  static const std::array<QColor, 5> colors{QColor(0x3d, 0x7e, 0xdb), QColor(0xe8, 0x8a, 0x2c),
                                            QColor(0x4c, 0xaf, 0x50), QColor(0xc0, 0x4b, 0xc8),
                                            QColor(0x8a, 0x93, 0x9e)};
  return colors[static_cast<std::size_t>(index) % colors.size()];
}

PerfDock::PerfDock(StatsHistoryModel* history, QWidget* parent)
    : QDockWidget(tr("Performance"), parent), history_(history) {
  setObjectName(QStringLiteral("perfDock"));
  auto* panel = new QWidget(this);
  auto* layout = new QVBoxLayout(panel);
  layout->setContentsMargins(4, 4, 4, 4);
  summary_ = new QLabel(panel);
  summary_->setObjectName(QStringLiteral("perfSummary"));
  summary_->setWordWrap(true);
  layout->addWidget(summary_);

  speed_ = makeChart(tr("Throughput"), tr("tok/s"));
  decode_ = addLine(speed_, tr("decode"));
  prefill_ = addLine(speed_, tr("prefill"));
  latency_ = makeChart(tr("Latency"), tr("ms"));
  itl50_ = addLine(latency_, tr("ITL p50"));
  itl95_ = addLine(latency_, tr("ITL p95"));
  itl99_ = addLine(latency_, tr("ITL p99"));
  ttft_ = new QScatterSeries;
  ttft_->setName(tr("TTFT per answer"));
  ttft_->setMarkerSize(8);
  latency_.chart->addSeries(ttft_);
  ttft_->attachAxis(latency_.x);
  ttft_->attachAxis(latency_.y);
  memory_ = makeChart(tr("Memory"), tr("MiB"));
  memory_stack_ = addStack(memory_, {{Col::kWeightsMiB, tr("weights")},
                                     {Col::kKvPoolMiB, tr("KV pool")},
                                     {Col::kWorkspaceMiB, tr("workspace")},
                                     {Col::kOtherMiB, tr("other")}});
  kv_ = makeChart(tr("KV cache"), tr("blocks"));
  kv_stack_ = addStack(kv_, {{Col::kKvUsed, tr("used")}, {Col::kKvCached, tr("cached")}, {Col::kKvFree, tr("free")}});
  for (const Chart* c : {&speed_, &latency_, &memory_, &kv_}) layout->addWidget(c->view, 1);
  colourSeries();

  // Narrower charts lose their axis labels; the dock itself may be narrower
  // (a 1024-pixel screen) and scrolls sideways then.
  panel->setMinimumWidth(380);
  auto* scroll = new QScrollArea(this);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setMinimumWidth(180);
  scroll->setWidget(panel);
  setWidget(scroll);
  connect(history_, &StatsHistoryModel::sampleAdded, this, [this] {
    if (isVisible()) refresh();
  });
}

PerfDock::Chart PerfDock::makeChart(const QString& title, const QString& y_title) {
  Chart c;
  c.chart = new QChart;
  c.chart->setTitle(title);
  c.chart->legend()->setAlignment(Qt::AlignBottom);
  c.chart->setMargins(QMargins(2, 2, 2, 2));
  c.chart->setAnimationOptions(QChart::NoAnimation);
  c.x = new QValueAxis;
  c.x->setTitleText(tr("seconds"));
  c.x->setLabelFormat(QStringLiteral("%.0f"));
  c.y = new QValueAxis;
  c.y->setTitleText(y_title);
  c.y->setLabelFormat(QStringLiteral("%.0f"));
  c.chart->addAxis(c.x, Qt::AlignBottom);
  c.chart->addAxis(c.y, Qt::AlignLeft);
  c.view = new QChartView(c.chart);
  c.view->setRenderHint(QPainter::Antialiasing);
  c.view->setMinimumHeight(190);
  return c;
}

QLineSeries* PerfDock::addLine(Chart& c, const QString& name) {
  auto* s = new QLineSeries;
  s->setName(name);
  c.chart->addSeries(s);
  s->attachAxis(c.x);
  s->attachAxis(c.y);
  return s;
}

PerfDock::Stack PerfDock::addStack(Chart& c, const std::vector<std::pair<int, QString>>& bands) {
  Stack stack;
  QLineSeries* lower = nullptr;
  for (const auto& [column, name] : bands) {
    auto* upper = new QLineSeries(c.chart);
    auto* area = new QAreaSeries(upper, lower);
    area->setName(name);
    c.chart->addSeries(area);
    area->attachAxis(c.x);
    area->attachAxis(c.y);
    stack.columns.push_back(column);
    stack.uppers.push_back(upper);
    lower = upper;
  }
  return stack;
}

void PerfDock::fillLine(QLineSeries* series, int column, double& y_max) {
  QList<QPointF> points;
  const int rows = history_->rowCount();
  points.reserve(rows);
  for (int r = 0; r < rows; ++r) {
    const double y = history_->value(r, static_cast<Col>(column));
    points.append({history_->value(r, Col::kTimeS), y});
    y_max = std::max(y_max, y);
  }
  series->replace(points);
}

void PerfDock::fillStack(const Stack& s, double& y_max) {
  const int rows = history_->rowCount();
  std::vector<double> sum(static_cast<std::size_t>(rows), 0.0);
  for (std::size_t band = 0; band < s.columns.size(); ++band) {
    QList<QPointF> points;
    points.reserve(rows);
    for (int r = 0; r < rows; ++r) {
      auto& acc = sum[static_cast<std::size_t>(r)];
      acc += history_->value(r, static_cast<Col>(s.columns[band]));
      points.append({history_->value(r, Col::kTimeS), acc});
      y_max = std::max(y_max, acc);
    }
    s.uppers[band]->replace(points);
  }
}

void PerfDock::setRange(Chart& c, double y_max) {
  c.x->setRange(t_min_, t_max_);
  c.y->setTickCount(kAxisTicks);
  c.y->setRange(0, nice_axis_top(y_max));
}

void PerfDock::refresh() {
  const int rows = history_->rowCount();
  t_max_ = rows > 0 ? std::max(history_->value(rows - 1, Col::kTimeS), 10.0) : 60.0;
  t_min_ = rows > 0 ? history_->value(0, Col::kTimeS) : 0.0;
  double y = 0;
  fillLine(decode_, Col::kDecodeTps, y);
  fillLine(prefill_, Col::kPrefillTps, y);
  setRange(speed_, y);
  y = 0;
  fillLine(itl50_, Col::kItlP50Ms, y);
  fillLine(itl95_, Col::kItlP95Ms, y);
  fillLine(itl99_, Col::kItlP99Ms, y);
  QList<QPointF> ttft;
  for (const auto& a : history_->answers()) {
    if (a.time_s < t_min_) continue;
    ttft.append({a.time_s, a.ttft_ms});
    y = std::max(y, a.ttft_ms);
  }
  ttft_->replace(ttft);
  setRange(latency_, y);
  y = 0;
  fillStack(memory_stack_, y);
  setRange(memory_, y);
  y = 0;
  fillStack(kv_stack_, y);
  setRange(kv_, y);

  const StatsSample* s = history_->latest();
  if (!s) return summary_->setText(tr("No samples yet."));
  const EngineStats& e = s->stats;
  kv_.chart->setTitle(tr("KV cache \u2014 prefix hit rate %1%").arg(100.0 * e.prefix_hit_rate, 0, 'f', 0));
  memory_.chart->setTitle(history_->onDevice() ? tr("VRAM") : tr("Memory (RAM)"));
  summary_->setText(summaryText(e, history_->answers().empty() ? nullptr : &history_->answers().back()));
}

void PerfDock::setDark(bool dark) {
  for (Chart* c : {&speed_, &latency_, &memory_, &kv_}) {
    const QString title = c->chart->title();
    c->chart->setTheme(dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    c->chart->setTitle(title);
    c->chart->setBackgroundRoundness(0);
  }
  colourSeries();  // a theme sets its own series colours
}

void PerfDock::colourSeries() {
  for (const Chart* c : {&speed_, &latency_, &memory_, &kv_}) {
    int index = 0;
    for (QAbstractSeries* series : c->chart->series()) {
      const QColor color = series_color(index++);
      if (auto* line = qobject_cast<QXYSeries*>(series)) {  // lines and the scatter
        line->setColor(color);
        if (auto* scatter = qobject_cast<QScatterSeries*>(series)) scatter->setBorderColor(color);
      } else if (auto* area = qobject_cast<QAreaSeries*>(series)) {
        QColor fill = color;
        fill.setAlphaF(0.55f);
        area->setColor(fill);
        area->setBorderColor(color);
      }
    }
  }
}

// While answers stream: the engine's rates now (a window of the last few
// seconds of steps). Idle: the last answer's own figures, the same numbers as
// its stats line in the chat (the window would show the last seconds only).
QString PerfDock::summaryText(const EngineStats& e, const StatsHistoryModel::Answer* last) {
  if (e.running > 0 || !last) {
    return tr("now: decode %1 tok/s \u00b7 prefill %2 tok/s \u00b7 ITL p95 %3 ms \u00b7 running %4, waiting %5")
        .arg(e.decode_tps, 0, 'f', 1)
        .arg(e.prefill_tps, 0, 'f', 0)
        .arg(e.inter_token.p95, 0, 'f', 1)
        .arg(e.running)
        .arg(e.waiting);
  }
  return tr("last answer: %1 tokens \u00b7 decode %2 tok/s \u00b7 TTFT %3 ms \u00b7 ITL p95 %4 ms")
      .arg(last->generated_tokens)
      .arg(last->decode_tps, 0, 'f', 1)
      .arg(last->ttft_ms, 0, 'f', 0)
      .arg(last->itl_p95_ms, 0, 'f', 1);
}

void PerfDock::showEvent(QShowEvent* event) {
  QDockWidget::showEvent(event);
  refresh();
}

}  // namespace hearth::app
