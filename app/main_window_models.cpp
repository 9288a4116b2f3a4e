// The main window's model manager: made on first use; installs and deletes
// refresh the model bar's list, Load loads through the window, and the loaded
// model is never deleted from under the engine.
#include "app/engine_bridge.h"
#include "app/main_window.h"
#include "app/model_bar.h"
#if defined(HEARTH_APP_HAVE_INSTALL)
#include "app/model_manager_dialog.h"
#endif

namespace hearth::app {

ModelManagerDialog* MainWindow::showModelManager() {
#if !defined(HEARTH_APP_HAVE_INSTALL)
  return nullptr;
#else
  if (!model_manager_) {
    model_manager_ = new ModelManagerDialog(models::builtin_catalog(), this);
    connect(model_manager_, &ModelManagerDialog::modelsChanged, model_bar_, &ModelBar::refreshInstalled);
    connect(model_manager_, &ModelManagerDialog::loadRequested, this, [this](const QString& path) {
      model_bar_->selectPath(path);
      loadModel(path);
    });
    connect(engine_.get(), &EngineBridge::modelLoaded, model_manager_,
            [this](const LoadedModel& m) { model_manager_->setLoadedPath(m.endpoint.isEmpty() ? m.path : QString()); });
    connect(engine_.get(), &EngineBridge::modelUnloaded, model_manager_, [this] { model_manager_->setLoadedPath({}); });
    if (const auto& m = engine_->model(); m && m->endpoint.isEmpty()) model_manager_->setLoadedPath(m->path);
  }
  model_manager_->refresh();
  model_manager_->show();
  model_manager_->raise();
  model_manager_->activateWindow();
  return model_manager_;
#endif
}

}  // namespace hearth::app
