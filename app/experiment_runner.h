// Runs an experiment: N past prompts, each again with prompt version A and
// with version B (conversation/'s begin_rerun, so each answer is a sibling of
// the original with its context up to it), all 2N generations submitted to
// the backend at once so the engine batches them (continuous batching). The
// experiment and its results are stored as they start (Store's experiments
// tables); each answer streams into the store like a chat answer (at most
// every kSaveIntervalMs) and is recorded with its generation. Every run uses
// the sampling, seed, limits and variables of the prompt's original answer,
// so A and B differ only in the prompt version. The conversations keep
// showing the branch they showed.
#pragma once

#include <QObject>
#include <QTimer>

#include <map>
#include <string>
#include <vector>

#include "app/engine_types.h"
#include "conversation/recorder.h"
#include "store/records.h"

namespace hearth::app {

class ChatBackend;
class StorageService;

struct ExperimentPlan {
  std::string name;
  store::Id version_a = 0;
  store::Id version_b = 0;
  std::vector<store::Id> prompts;  // user message ids
};

class ExperimentRunner : public QObject {
  Q_OBJECT

 public:
  ExperimentRunner(StorageService* storage, ChatBackend* backend, QObject* parent = nullptr);
  ~ExperimentRunner() override;  // answers still streaming are cancelled and finished with their text

  void start(const ExperimentPlan& plan);
  bool running() const { return !active_.empty() || starting_; }
  int finishedCount() const { return finished_; }
  int totalCount() const { return total_; }

 signals:
  void started(qint64 experiment_id, int generations);
  void progress(int finished, int total);
  void finished(qint64 experiment_id);
  void failed(const QString& message);

 private:
  void onTokens(qint64 tag, const QString& text);
  void onFinished(const GenerationDone& done);
  void save();

  StorageService* storage_;
  ChatBackend* backend_;
  std::map<store::Id, conversation::AnswerRecorder> active_;  // by answer id (the request's tag)
  QTimer save_timer_;
  store::Id experiment_id_ = 0;
  int finished_ = 0;
  int total_ = 0;
  bool starting_ = false;
};

}  // namespace hearth::app
