// EngineWorker's "serve this model": a ModelServer over the loaded local
// engine. Only a local model is served (a remote one is already a server).
#include "app/engine_worker.h"

#include <QFileInfo>

#include "engine/core/log.h"

namespace hearth::app {

void EngineWorker::serve(bool on, const ServeOptions& options) {
  if (!on) return stopServing({});
  if (served_) return emit servingChanged(QString::fromStdString(served_->url()), {});
  if (!engine_ || !model_.endpoint.isEmpty()) {
    return emit servingChanged(
        {}, engine_ ? tr("a remote model cannot be served from here: load a local one") : tr("no model is loaded"));
  }
  ServeOptions o = options;
  // The id hearth-server would give it: the file name without .gguf.
  if (o.model_id.empty()) o.model_id = QFileInfo(model_.path).completeBaseName().toStdString();
  auto started = ModelServer::start(*engine_, o);
  if (!started) {
    log::get("app")->warn("could not serve {}: {}", o.model_id, started.error().describe());
    return emit servingChanged({}, QString::fromStdString(started.error().message));
  }
  served_ = std::move(started).value();
  log::get("app")->info("serving {} on {}", o.model_id, served_->url());
  emit servingChanged(QString::fromStdString(served_->url()), {});
}

void EngineWorker::stopServing(const QString& why) {
  if (!served_) return;
  served_.reset();
  emit servingChanged({}, why);
}

}  // namespace hearth::app
