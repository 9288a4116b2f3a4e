// File > Load with options (app/load_options_dialog.h) and the first start's
// hardware-aware defaults (models/recommend.h): both end in the settings, so
// the next start loads the same way.
#include <algorithm>

#include "app/banner.h"
#include "app/engine_bridge.h"
#include "app/generation_panel.h"
#include "app/load_options_dialog.h"
#include "app/main_window.h"
#include "app/model_bar.h"

namespace hearth::app {

void MainWindow::adoptChosenDefaults(const ChosenDefaults& chosen) {
  settings::Settings& s = settings_.values;
  s.device = chosen.device.toStdString();
  s.context_length = std::clamp(chosen.context_length, settings::kMinContextLength, settings::kMaxContextLength);
  if (chosen.kv_precision == QLatin1String("q8_0")) {
    s.kv_precision = KvPrecision::kQ8_0;
  } else if (chosen.kv_precision == QLatin1String("fp8")) {
    s.kv_precision = KvPrecision::kFp8E4M3;
  } else {
    s.kv_precision = KvPrecision::kF16;
  }
  settings_.first_start = false;
  saveSettings();
  generation_panel_->setContextLength(s.context_length);
  model_bar_->setDeviceSetting(chosen.device);
  chosen_reasons_ = chosen.reasons;
  banner_->showNotice(tr("Chosen for this machine: %1, %2 tokens of context, %3 KV cache. File > Load with "
                         "options\u2026 says why and changes it.")
                          .arg(chosen.device)
                          .arg(chosen.context_length)
                          .arg(chosen.kv_precision),
                      {}, {}, 8000);
}

void MainWindow::openLoadOptions() {
  if (load_options_ != nullptr) {
    load_options_->raise();
    return;
  }
  const auto& loaded = engine_->model();
  const QString current = loaded && loaded->endpoint.isEmpty() ? loaded->path : model_bar_->selectedPath();
  models::RunConfig config = run_config_of(settings_.values);
  if (!quant_override_.empty()) config.quant = quant_override_;
  load_options_ = new LoadOptionsDialog(model_bar_->paths(), current, config, this);
  load_options_->setAttribute(Qt::WA_DeleteOnClose);
  connect(load_options_, &QObject::destroyed, this, [this] { load_options_ = nullptr; });
  connect(load_options_, &QDialog::accepted, this, [this] {
    const models::RunConfig c = load_options_->config();
    const QString model = load_options_->model();
    settings::Settings& s = settings_.values;
    s.device = c.device;
    s.context_length = std::clamp(c.context_length, settings::kMinContextLength, settings::kMaxContextLength);
    s.kv_precision = c.kv_precision;
    s.weight_format = c.quant;
    quant_override_.clear();  // the dialog's format is the one now
    saveSettings();
    generation_panel_->setContextLength(s.context_length);
    model_bar_->setDeviceSetting(QString::fromStdString(s.device));
    model_bar_->selectPath(model);
    loadModel(model);
  });
  load_options_->open();
}

}  // namespace hearth::app
