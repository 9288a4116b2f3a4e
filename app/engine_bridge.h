// The UI thread's handle on the engine: starts the worker thread, forwards
// calls to the EngineWorker as queued invocations and re-emits its signals
// (which arrive queued, on the UI thread). Also remembers the loaded model.
#pragma once

#include <QObject>
#include <QThread>

#include <optional>

#include "app/engine_types.h"

namespace hearth::app {

class EngineWorker;

class EngineBridge : public QObject {
  Q_OBJECT

 public:
  explicit EngineBridge(QObject* parent = nullptr);
  ~EngineBridge() override;  // cancels, drops the engine, joins the thread

  void loadModel(const QString& path_or_name, int context_length = 0);
  void unloadModel();
  void generate(const GenerationRequest& request);
  void cancel(qint64 tag);

  const std::optional<LoadedModel>& model() const { return model_; }
  bool loading() const { return loading_; }

 signals:
  void loadStarted(const QString& path);
  void modelLoaded(const hearth::app::LoadedModel& model);
  void loadFailed(const QString& path, const QString& message);
  void modelUnloaded();
  void tokens(qint64 tag, const QString& text, int count);
  void finished(const hearth::app::GenerationDone& done);
  void statsUpdated(const hearth::app::StatsSample& sample);

 private:
  QThread thread_;
  EngineWorker* worker_ = nullptr;  // lives on thread_; deleted after it stops
  std::optional<LoadedModel> model_;
  bool loading_ = false;
};

void register_engine_metatypes();

}  // namespace hearth::app
