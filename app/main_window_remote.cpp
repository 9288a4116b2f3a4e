// MainWindow's remote endpoint: the settings remember the last endpoint's
// URL and model (never its key) and whether the app was on it; at start it
// reconnects there, and when the endpoint does not answer the local model
// loads instead with a banner saying why (the endpoint stays remembered).

#include <utility>

#include "app/banner.h"
#include "app/engine_bridge.h"
#include "app/main_window.h"
#include "app/model_bar.h"
#include "app/remote_endpoint_dialog.h"

namespace hearth::app {

void MainWindow::startModel(const MainWindowOptions& options) {
  const settings::Settings& s = settings_.values;
  if (options.model.isEmpty() && s.remote_in_use && !s.remote_url.empty()) {
    startup_remote_ = QString::fromStdString(s.remote_url);
    engine_->connectRemote(startup_remote_, environment_api_key(), QString::fromStdString(s.remote_model));
    return;
  }
  const QString model = initialModel(options);
  model_bar_->selectPath(model);
  if (settings_.first_start && options.choose_defaults) {
    engine_->loadModelChoosingDefaults(model, run_config_of(s));
    return;
  }
  loadModel(model);
}

void MainWindow::askForRemoteEndpoint() {
  ask_for_remote_endpoint(this, *engine_, QString::fromStdString(settings_.values.remote_url),
                          QString::fromStdString(settings_.values.remote_model));
}

void MainWindow::rememberBackend(const LoadedModel& m) {
  settings::Settings& s = settings_.values;
  startup_remote_.clear();
  bool changed = false;
  const auto set = [&changed](auto& field, const auto& value) {
    if (field == value) return;
    field = value;
    changed = true;
  };
  if (!m.endpoint.isEmpty()) {
    set(s.remote_url, m.endpoint.toStdString());
    set(s.remote_model, m.name.toStdString());
    set(s.remote_in_use, true);
  } else {
    set(s.last_model, m.path.toStdString());
    // A local model the user chose ends the remote session; the one loaded in a failed
    // endpoint's place does not (the next start tries the endpoint again).
    if (!std::exchange(remote_fallback_, false)) set(s.remote_in_use, false);
  }
  if (changed) saveSettings();
}

bool MainWindow::fallBackToLocal(const QString& url, const QString& message) {
  if (startup_remote_.isEmpty() || url != startup_remote_ || engine_->model()) return false;
  startup_remote_.clear();
  remote_fallback_ = true;
  const QString local = initialModel({});
  banner_->showError(tr("Could not connect to the remote endpoint %1: %2. Loading the local model %3 instead; "
                        "the device menu's Remote endpoint\u2026 connects again.")
                         .arg(url, message, local));
  model_bar_->selectPath(local);
  loadModel(local);
  return true;
}

}  // namespace hearth::app
