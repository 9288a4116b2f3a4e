// The UI thread's handle on the local engine, and the chat's ChatBackend:
// starts the worker thread, forwards calls to the EngineWorker as queued
// invocations and re-emits its signals (which arrive queued, on the UI
// thread). Also remembers the loaded model: a failed load keeps it (the
// worker says modelUnloaded() when there is none left).
#pragma once

#include <QThread>

#include <optional>

#include "app/chat_backend.h"
#include "app/engine_types.h"
#include "app/model_server.h"
#include "app/profiler_data.h"
#include "models/run_config.h"

namespace hearth::app {

class EngineWorker;

class EngineBridge final : public ChatBackend {
  Q_OBJECT

 public:
  explicit EngineBridge(QObject* parent = nullptr);
  ~EngineBridge() override;  // cancels, drops the engine, joins the thread

  void loadModel(const QString& path_or_name, const models::RunConfig& config);
  // EngineWorker::loadModelChoosingDefaults: the first start's load; defaultsChosen() before the load's signals.
  void loadModelChoosingDefaults(const QString& path_or_name, const models::RunConfig& config);
  void unloadModel();
  // A remote endpoint as the model (EngineWorker::connectRemote): the same signals as a load.
  void connectRemote(const QString& url, const QString& api_key, const QString& model);
  // "Serve this model" on/off (EngineWorker::serve); servingChanged() reports.
  void serve(bool on, const ServeOptions& options);
  const QString& servedUrl() const { return served_url_; }
  void generate(const GenerationRequest& request) override;
  void cancel(qint64 tag) override;
  void countTokens(const TokenCountRequest& request) override;
  // The engine's instruments, kept across model loads (EngineWorker).
  void setProfiling(bool on);
  void setOverflowCheck(bool on);

  const std::optional<LoadedModel>& model() const override { return model_; }
  bool loading() const { return loading_; }

 signals:
  void loadStarted(const QString& path);
  void defaultsChosen(const hearth::app::ChosenDefaults& chosen);
  void modelLoaded(const hearth::app::LoadedModel& model);
  void loadFailed(const QString& path, const QString& message);
  void modelUnloaded();
  void statsUpdated(const hearth::app::StatsSample& sample);
  void servingChanged(const QString& url, const QString& error);
  void profileUpdated(const hearth::app::ProfileUpdate& update);
  void overflowFound(const hearth::OverflowFinding& finding);

 private:
  QThread thread_;
  EngineWorker* worker_ = nullptr;  // lives on thread_; deleted after it stops
  std::optional<LoadedModel> model_;
  bool loading_ = false;
  QString served_url_;
};

void register_engine_metatypes();

}  // namespace hearth::app
