// EngineWorker's remote side: a remote OpenAI-compatible endpoint behind the
// Engine interface (conversation/remote), held where a local engine would be.
// Chat, records and history then work unchanged; what only a local model has
// (profiling; continuing an answer, unless the server is hearth-server) is
// refused with a message naming why.

#include "app/engine_worker.h"

#include "engine/core/log.h"
#ifdef HEARTH_APP_HAVE_REMOTE
#include "conversation/remote/remote_engine.h"
#endif

namespace hearth::app {

void EngineWorker::connectRemote(const QString& url, const QString& api_key, const QString& model) {
  emit loadStarted(url);
  const auto refuse = [&](const Error& error) {
    log::get("app")->warn("could not connect to {}: {}", url.toStdString(), error.describe());
    emit loadFailed(url, QString::fromStdString(error.describe()));
    if (engine_) emit modelLoaded(model_);  // the model that stays
  };
#ifdef HEARTH_APP_HAVE_REMOTE
  auto endpoint = remote::parse_endpoint(url.trimmed().toStdString(), api_key.trimmed().toStdString());
  if (!endpoint) return refuse(endpoint.error());
  remote::RemoteOptions options;
  options.endpoint = std::move(endpoint).value();
  options.model = model.trimmed().toStdString();
  auto connected = remote::connect_remote(std::move(options));
  if (!connected) return refuse(connected.error());
  dropEngine();
  engine_ = std::move(connected).value();
  config_ = {};
  const ModelRunInfo& run = engine_->run_info();
  model_ = LoadedModel{};
  model_.name = QString::fromStdString(engine_->model_info().name);
  model_.architecture = QString::fromStdString(engine_->model_info().architecture);
  model_.device = QString::fromStdString(run.device);
  model_.device_name = QString::fromStdString(run.device_name);
  model_.chat_format = QString::fromStdString(run.chat_format);
  model_.endpoint = model_.device;
  model_.continues = remote::continues_answers(*engine_);
  log::get("app")->info("using remote model {} at {}", engine_->model_info().name, run.device);
  emit modelLoaded(model_);
#else
  static_cast<void>(api_key);
  static_cast<void>(model);
  refuse(
      make_error(ErrorCode::kUnsupported, "this build of Hearth has no remote endpoints (built without cpp-httplib)"));
#endif
}

}  // namespace hearth::app
