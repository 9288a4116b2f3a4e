#include "app/experiment_runner.h"

#include <QJsonDocument>
#include <QJsonObject>

#include "app/chat_backend.h"
#include "app/engine_worker.h"
#include "app/storage_service.h"
#include "conversation/prepare.h"
#include "conversation/prompt_resolve.h"
#include "conversation/sampling_record.h"

namespace hearth::app {
namespace {

// What the storage thread hands back: the experiment and every turn begun.
struct Begun {
  store::Id experiment_id = 0;
  std::vector<conversation::PreparedTurn> turns;
  std::string model_sha256;
};

// The turn settings that repeat `original` (the prompt's answer before the
// experiment) with `prompt`: its sampling, seed, limits and variables. Set as
// overrides too, since begin_rerun would otherwise take them from the newest
// answer, which after the first run of a pair is that run's.
conversation::TurnSettings repeat_of(const std::optional<store::GenerationRecord>& original, std::string prompt) {
  conversation::TurnSettings t;
  t.prompt = std::move(prompt);
  if (!original) return t;
  t.sampling = conversation::sampling_of(original->sampling);
  if (original->max_tokens > 0) t.max_tokens = static_cast<std::int32_t>(original->max_tokens);
  t.stop = original->stop;
  t.variables = original->variables;
  conversation::SamplingOverrides& o = t.overrides;
  o.temperature = t.sampling.temperature;
  o.top_k = t.sampling.top_k;
  o.top_p = t.sampling.top_p;
  o.min_p = t.sampling.min_p;
  o.repeat_penalty = t.sampling.repeat_penalty;
  o.seed = t.sampling.seed;
  o.max_tokens = t.max_tokens;
  o.stop = t.stop;
  return t;
}

store::StoreResult<std::string> reference_of(store::Store& s, store::Id version_id) {
  STORE_ASSIGN_OR_RETURN(const store::ResolvedPrompt r, conversation::resolve_version_id(s, version_id));
  return r.prompt.name + "@" + std::to_string(r.version.version);
}

// The run's choices, as the experiment's settings_json.
std::string settings_json(const ExperimentPlan& plan, const std::string& model_path, const std::string& model_name,
                          const std::string& ref_a, const std::string& ref_b) {
  QJsonObject o;
  o[QStringLiteral("model")] = QString::fromStdString(model_name);
  o[QStringLiteral("model_path")] = QString::fromStdString(model_path);
  o[QStringLiteral("prompts")] = static_cast<qint64>(plan.prompts.size());
  o[QStringLiteral("version_a")] = QString::fromStdString(ref_a);
  o[QStringLiteral("version_b")] = QString::fromStdString(ref_b);
  return QJsonDocument(o).toJson(QJsonDocument::Compact).toStdString();
}

store::StoreResult<Begun> begin_experiment(store::Store& s, const ExperimentPlan& plan, const std::string& model_path,
                                           const std::string& model_name) {
  Begun out;
  STORE_ASSIGN_OR_RETURN(const std::string ref_a, reference_of(s, plan.version_a));
  STORE_ASSIGN_OR_RETURN(const std::string ref_b, reference_of(s, plan.version_b));
  // First what every prompt's newest answer was (what both runs repeat) and
  // what each conversation showed: the runs below change both.
  std::map<store::Id, std::optional<store::Id>> leaves;  // conversation -> the leaf it showed
  std::map<store::Id, std::optional<store::GenerationRecord>> originals;
  for (const store::Id prompt : plan.prompts) {
    STORE_ASSIGN_OR_RETURN(const store::Message m, s.get_message(prompt));
    if (leaves.count(m.conversation_id)) continue;
    STORE_ASSIGN_OR_RETURN(const store::Conversation c, s.get_conversation(m.conversation_id));
    leaves[m.conversation_id] = c.current_leaf_id;
    STORE_ASSIGN_OR_RETURN(const auto rows, s.history({.conversation_id = m.conversation_id, .limit = 10000}));
    for (const auto& e : rows) originals[e.message_id] = e.generation;
  }
  STORE_ASSIGN_OR_RETURN(out.experiment_id,
                         s.create_experiment({plan.name, plan.version_a, plan.version_b,
                                              settings_json(plan, model_path, model_name, ref_a, ref_b)}));
  for (const store::Id prompt : plan.prompts) {
    for (const auto& [version, ref] : {std::pair{plan.version_a, ref_a}, std::pair{plan.version_b, ref_b}}) {
      STORE_ASSIGN_OR_RETURN(conversation::PreparedTurn turn,
                             conversation::begin_rerun(s, prompt, repeat_of(originals[prompt], ref), nullptr));
      STORE_TRY(s.add_experiment_result(out.experiment_id, {0, prompt, version, turn.answer_id}));
      out.turns.push_back(std::move(turn));
    }
  }
  for (const auto& [conversation_id, leaf] : leaves) {
    if (leaf) STORE_TRY(s.switch_branch(*leaf));  // the conversation shows what it showed
  }
  out.model_sha256 = conversation::model_sha256(model_path);
  return out;
}

}  // namespace

ExperimentRunner::ExperimentRunner(StorageService* storage, ChatBackend* backend, QObject* parent)
    : QObject(parent), storage_(storage), backend_(backend) {
  save_timer_.setInterval(conversation::kSaveIntervalMs);
  connect(&save_timer_, &QTimer::timeout, this, &ExperimentRunner::save);
  connect(backend_, &ChatBackend::tokens, this, [this](qint64 tag, const QString& text, int) { onTokens(tag, text); });
  connect(backend_, &ChatBackend::finished, this, &ExperimentRunner::onFinished);
}

ExperimentRunner::~ExperimentRunner() {
  for (auto& [id, recorder] : active_) {
    backend_->cancel(id);
    store::FinishMessage finish;
    finish.tail = recorder.take_unsaved();
    storage_->run(tr("finishing an experiment's answer"),
                  [id = id, finish](store::Store& s) { return s.finish_message(id, finish); });
  }
}

void ExperimentRunner::start(const ExperimentPlan& plan) {
  if (running()) return emit failed(tr("An experiment is running already."));
  const auto& model = backend_->model();
  if (!model) return emit failed(tr("No model is loaded. Load one from the model bar."));
  if (plan.prompts.empty()) return emit failed(tr("The history filter shows no prompts to run."));
  if (plan.version_a == 0 || plan.version_b == 0) return emit failed(tr("Choose two prompt versions."));
  starting_ = true;
  finished_ = 0;
  total_ = static_cast<int>(plan.prompts.size() * 2);
  const conversation::ModelIdentity identity{model->path.toStdString(),         {},
                                             model->quantization.toStdString(), model->kv_precision.toStdString(),
                                             model->device.toStdString(),       model->name.toStdString()};
  storage_->write(
      this, tr("starting the experiment \"%1\"").arg(QString::fromStdString(plan.name)),
      [plan, identity](store::Store& s) { return begin_experiment(s, plan, identity.path, identity.name); },
      [this, identity](Begun begun) {
        starting_ = false;
        experiment_id_ = begun.experiment_id;
        conversation::ModelIdentity recorded = identity;
        recorded.sha256 = begun.model_sha256;
        std::vector<GenerationRequest> requests;
        for (auto& turn : begun.turns) {
          GenerationRequest r;
          r.tag = turn.answer_id;
          r.turns = turn.messages;
          r.sampling = turn.sampling;
          r.max_tokens = turn.max_tokens;
          r.stop = turn.stop;
          requests.push_back(std::move(r));
          const store::Id id = turn.answer_id;
          active_.emplace(id, conversation::AnswerRecorder(std::move(turn), recorded, conversation::now_ms()));
        }
        emit started(experiment_id_, static_cast<int>(requests.size()));
        save_timer_.start();
        for (const auto& r : requests) backend_->generate(r);  // all at once: the engine batches them
      });
  // A refused start (unknown version, a store error) ends the run.
  connect(
      storage_, &StorageService::error, this,
      [this](const QString& message) {
        if (!starting_) return;
        starting_ = false;
        emit failed(message);
      },
      Qt::SingleShotConnection);
}

void ExperimentRunner::onTokens(qint64 tag, const QString& text) {
  const auto it = active_.find(tag);
  if (it != active_.end()) it->second.add(text.toStdString());
}

void ExperimentRunner::save() {
  for (auto& [id, recorder] : active_) {
    if (!recorder.has_unsaved()) continue;
    storage_->run(tr("saving an experiment's answer"),
                  [id = id, text = recorder.take_unsaved()](store::Store& s) { return s.append_streaming(id, text); });
  }
}

void ExperimentRunner::onFinished(const GenerationDone& done) {
  const auto it = active_.find(done.tag);
  if (it == active_.end()) return;
  const conversation::AnswerEnd end{done.reason, done.usage, done.error.toStdString()};
  const store::FinishMessage finish = it->second.finish(end, conversation::now_ms(), resident_bytes());
  active_.erase(it);
  ++finished_;
  const bool last = active_.empty();
  if (last) save_timer_.stop();
  storage_->run(
      this, tr("finishing an experiment's answer"),
      [id = done.tag, finish](store::Store& s) -> store::StoreResult<bool> {
        STORE_TRY(s.finish_message(id, finish));
        return true;
      },
      [this, last](bool) {
        emit progress(finished_, total_);
        if (last) emit finished(experiment_id_);
      });
}

}  // namespace hearth::app
