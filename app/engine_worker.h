// The bridge to the engine: a QObject living on its own QThread that owns the
// Engine. The UI calls its slots through queued invocations (EngineBridge) and
// hears back through its signals only; nothing here blocks the UI thread.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QString>

#include <map>
#include <memory>
#include <optional>

#include "app/engine_types.h"
#include "app/model_server.h"
#include "app/profiler_data.h"
#include "models/run_config.h"

class QTimer;

namespace hearth::app {

class BatchingSink;

class EngineWorker : public QObject {
  Q_OBJECT

 public:
  explicit EngineWorker(QObject* parent = nullptr);
  ~EngineWorker() override;

  static constexpr int kFlushIntervalMs = 33;   // token batches reach the UI at ~30 Hz
  static constexpr int kStatsIntervalMs = 250;  // performance samples at 4 Hz

 public slots:
  void start();  // creates the timers on the worker thread
  // Opens the model through models::open_engine with `config` (the app sets
  // max_sequences: one user, maybe a regeneration running). A model that
  // cannot be loaded leaves the loaded one in place (see the .cpp).
  void loadModel(const QString& path_or_name, const hearth::models::RunConfig& config);
  // The first start's load: the device, context, KV precision and batch
  // limits recommended for this machine (models/recommend.h: free memory,
  // bandwidth, the model) replace `config`'s, defaultsChosen() says what and
  // why, then loadModel(). A model that cannot be read loads as asked.
  void loadModelChoosingDefaults(const QString& path_or_name, const hearth::models::RunConfig& config);
  void unloadModel();
  // A remote OpenAI-compatible endpoint becomes the model (engine_worker_remote.cpp):
  // its /models is asked first (`model` "" : its only one), so an unreachable
  // endpoint, a refused key or an unknown model fail with loadFailed() and
  // the loaded model stays.
  void connectRemote(const QString& url, const QString& api_key, const QString& model);
  // "Serve this model" (engine_worker_serve.cpp): the OpenAI API over the
  // loaded local engine, or off. A model that goes (unload, another load)
  // stops it; servingChanged() says so each time.
  void serve(bool on, const hearth::app::ServeOptions& options);
  void generate(const hearth::app::GenerationRequest& request);
  void cancel(qint64 tag);
  void countTokens(const hearth::app::TokenCountRequest& request);  // tokensCounted(tag, -1) without a model
  void shutdown();  // drops the engine (cancelling what runs) and stops the timers
  // The instruments (engine_worker_profiler.cpp), kept across model loads.
  // Profiling on: a fresh window, polled with the stats (profileUpdated, 4 Hz).
  void setProfiling(bool on);
  void setOverflowCheck(bool on);  // overflowFound once per finding

 signals:
  void loadStarted(const QString& path);
  void defaultsChosen(const hearth::app::ChosenDefaults& chosen);
  void modelLoaded(const hearth::app::LoadedModel& model);
  void loadFailed(const QString& path, const QString& message);
  void modelUnloaded();
  void tokens(qint64 tag, const QString& text, int count);
  void finished(const hearth::app::GenerationDone& done);
  void tokensCounted(qint64 tag, int tokens);
  void statsUpdated(const hearth::app::StatsSample& sample);
  // The served URL ("" : not serving) and why it stopped or could not start ("" : asked to).
  void servingChanged(const QString& url, const QString& error);
  void profileUpdated(const hearth::app::ProfileUpdate& update);
  void overflowFound(const hearth::OverflowFinding& finding);

 private slots:
  void flush();
  void sampleStats();

 private:
  struct Active {
    RequestId id = 0;
    std::shared_ptr<BatchingSink> sink;
  };
  void finishActive(qint64 tag, const FinishEvent& event);
  std::optional<Error> open(const QString& path_or_name, const models::RunConfig& config);
  void dropEngine();
  void applyInstruments();  // to a newly opened engine
  void pollInstruments();   // with each stats sample

  static constexpr std::size_t kProfileKeepSteps = 512;  // > steps per poll at any decode rate

  void stopServing(const QString& why);

  std::unique_ptr<Engine> engine_;
  std::unique_ptr<ModelServer> served_;  // after engine_: destroyed first (it uses the engine)
  LoadedModel model_;
  models::RunConfig config_;  // the loaded model's
  std::map<qint64, Active> active_;
  QTimer* flush_timer_ = nullptr;
  QTimer* stats_timer_ = nullptr;
  QElapsedTimer clock_;
  bool profiling_ = false;
  bool overflow_check_ = false;
  bool overflow_reported_ = false;
  std::uint64_t profile_window_ = 0;  // bumped when profiling (re)starts
  std::uint64_t engine_window_ = 0;   // the engine's number for that window (its reports before it are stale)
  std::int64_t next_profile_step_ = 0;
  std::int64_t sent_profile_steps_ = -1;  // the window's step count last sent
};

// The process's resident memory in bytes (from /proc/self/statm; 0 elsewhere).
std::int64_t resident_bytes();

}  // namespace hearth::app
