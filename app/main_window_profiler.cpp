// The main window's side of the profiler (issue 19): the dock's switches go
// to the engine bridge (profiling while the dock is open, the overflow check
// from the settings' debug option), the engine's profile and findings come
// back to the dock, the log and the banner.
#include <QAction>

#include "app/banner.h"
#include "app/chat_controller.h"
#include "app/engine_bridge.h"
#include "app/generation_panel.h"
#include "app/latency_advisor.h"
#include "app/main_window.h"
#include "app/profiler_dock.h"
#include "engine/core/log.h"

namespace hearth::app {

void MainWindow::connectProfiler() {
  ProfilerDock* dock = profiler_dock_;
  EngineBridge* e = engine_.get();
  connect(dock, &ProfilerDock::profilingChanged, e, &EngineBridge::setProfiling);
  connect(dock->toggleViewAction(), &QAction::triggered, dock, [dock](bool open) {
    if (open) dock->raise();  // the front tab of its column
  });
  connect(e, &EngineBridge::profileUpdated, dock, &ProfilerDock::applyUpdate);
  connect(dock, &ProfilerDock::overflowCheckToggled, this, [this](bool on) {
    settings_.values.check_overflow = on;
    saveSettings();
    engine_->setOverflowCheck(on);
    log::get("app")->info("overflow check {}", on ? "on (every op's output is read back: slower)" : "off");
  });
  connect(e, &EngineBridge::overflowFound, this, [this](const OverflowFinding& f) {
    profiler_dock_->showOverflow(f);
    banner_->showError(tr("Overflow check: %1 at layer %2, op %3 (max |x| %4, token position %5). See the log.")
                           .arg(QString::fromStdString(f.what))
                           .arg(f.layer)
                           .arg(QString::fromStdString(f.op))
                           .arg(f.max_abs, 0, 'g', 6)
                           .arg(f.position));
  });
  dock->setOverflowCheck(settings_.values.check_overflow);
  if (settings_.values.check_overflow) e->setOverflowCheck(true);
  connectAdvice();
}

namespace {

advice::LatencyMetric metric_of(const std::string& name) {
  return name == "ttft_p99" ? advice::LatencyMetric::kTtftP99 : advice::LatencyMetric::kInterTokenP99;
}

// --quant spells the K mixtures by their base type.
std::string quant_of(const std::string& format) {
  return format.ends_with("_M") ? format.substr(0, format.size() - 2) : format;
}

}  // namespace

void MainWindow::connectAdvice() {
  advisor_ = new LatencyAdvisor(this);
  const settings::Settings& s = settings_.values;
  advisor_->setTarget(metric_of(s.latency_metric), s.latency_target_ms);
  profiler_dock_->setLatencyTarget(s.latency_metric == "ttft_p99" ? 1 : 0, s.latency_target_ms);
  connect(profiler_dock_, &ProfilerDock::latencyTargetChanged, this, [this](int metric, double ms) {
    settings_.values.latency_metric = metric == 1 ? "ttft_p99" : "itl_p99";
    settings_.values.latency_target_ms = ms;
    saveSettings();
    advisor_->setTarget(metric_of(settings_.values.latency_metric), ms);
  });
  connect(engine_.get(), &EngineBridge::modelLoaded, advisor_, &LatencyAdvisor::setModel);
  connect(controller_.get(), &ChatController::answerFinished, advisor_, &LatencyAdvisor::addAnswer);
  // A profile, when one runs, says how much of a step the weights and the attention take.
  connect(engine_.get(), &EngineBridge::profileUpdated, advisor_, [this] {
    const ProfileReport& r = profiler_dock_->data().report();
    if (r.forward_us <= 0 || r.matrix_us.empty()) return;
    double matmul = r.outside_layers_us[static_cast<std::size_t>(KernelKind::kMatmul)], attention = 0;
    for (std::int32_t l = 0; l < r.n_layer; ++l) {
      matmul += r.cell(l, KernelKind::kMatmul);
      attention += r.cell(l, KernelKind::kAttention) + r.cell(l, KernelKind::kKvStore);
    }
    advisor_->setShares(matmul / r.forward_us, attention / r.forward_us);
  });
  connect(advisor_, &LatencyAdvisor::suggestionReady, this,
          [this](const advice::Suggestion& suggestion, const QString& text) {
            log::get("app")->info("latency advice: {}", text.toStdString());
            banner_->showNotice(
                text, tr("Apply"), [this, suggestion] { applySuggestion(suggestion); }, 120000);
          });
}

// The accepted suggestion, through the settings where it has one, then the model reloads.
void MainWindow::applySuggestion(const advice::Suggestion& s) {
  if (s.change == "kv_precision") {
    if (const auto kv = parse_kv_precision(s.to)) settings_.values.kv_precision = *kv;
  } else if (s.change == "context_length") {
    settings_.values.context_length = std::stoi(s.to);
    generation_panel_->setContextLength(settings_.values.context_length);
  } else if (s.change == "weight_format") {
    quant_override_ = quant_of(s.to);
  } else {
    return;  // streams: the app runs one at a time already
  }
  saveSettings();
  log::get("app")->info("latency advice applied: {} {} -> {}", s.change, s.from, s.to);
  if (engine_->model()) loadModel(engine_->model()->path);
}

}  // namespace hearth::app
