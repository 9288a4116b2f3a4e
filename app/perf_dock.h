// The performance dock: live charts drawn from the StatsHistoryModel —
// decode / prefill tokens per second; latency (TTFT per answer, inter-token
// percentiles); memory by category as stacked areas; KV blocks used / cached /
// free with the prefix-cache hit rate. Redrawn only while visible.
#pragma once

#include <QDockWidget>

#include <vector>

#include "app/stats_history_model.h"

class QChart;
class QColor;
class QChartView;
class QLabel;
class QLineSeries;
class QScatterSeries;
class QValueAxis;

namespace hearth::app {

// A value axis from 0 that ends on a round number and has integer labels at
// its kAxisTicks ticks: the top is the smallest 1-2-5 x 10^k step times
// (kAxisTicks - 1) above y_max x 1.15 (at least 1 per step when idle).
inline constexpr int kAxisTicks = 5;
double nice_axis_top(double y_max);

// The series colours, the same in the light and the dark theme (Qt's chart
// themes each have their own order): series `index` of a chart.
QColor series_color(int index);

class PerfDock : public QDockWidget {
  Q_OBJECT

 public:
  PerfDock(StatsHistoryModel* history, QWidget* parent = nullptr);
  void setDark(bool dark);
  // The summary line above the charts (static: the tests read it without a dock).
  static QString summaryText(const EngineStats& engine, const StatsHistoryModel::Answer* last_answer);

 public slots:
  void refresh();

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  struct Chart {
    QChart* chart = nullptr;
    QChartView* view = nullptr;
    QValueAxis* x = nullptr;
    QValueAxis* y = nullptr;
  };
  struct Stack {  // stacked areas: each band's upper edge is the running sum
    std::vector<int> columns;
    std::vector<QLineSeries*> uppers;
  };
  Chart makeChart(const QString& title, const QString& y_title);
  QLineSeries* addLine(Chart& c, const QString& name);
  Stack addStack(Chart& c, const std::vector<std::pair<int, QString>>& bands);
  void fillStack(const Stack& s, double& y_max);
  void fillLine(QLineSeries* series, int column, double& y_max);
  void setRange(Chart& c, double y_max);
  void colourSeries();

  StatsHistoryModel* history_;
  QLabel* summary_ = nullptr;
  Chart speed_, latency_, memory_, kv_;
  QLineSeries* decode_ = nullptr;
  QLineSeries* prefill_ = nullptr;
  QLineSeries* itl50_ = nullptr;
  QLineSeries* itl95_ = nullptr;
  QLineSeries* itl99_ = nullptr;
  QScatterSeries* ttft_ = nullptr;
  Stack memory_stack_, kv_stack_;
  double t_min_ = 0, t_max_ = 60;
};

}  // namespace hearth::app
