#include "app/engine_worker.h"

#include <QFileInfo>
#include <QTimer>

#include <unistd.h>
#include <fstream>

#include "app/batching_sink.h"
#include "engine/core/log.h"
#include "engine/gguf/gguf_file.h"
#include "engine/model/model.h"
#include "models/catalog.h"
#include "models/recommend.h"
#include "models/run_config.h"

namespace hearth::app {
namespace {

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

// A chat's prompt tokens as the engine would count them (PromptBuilder): the
// chat rendered with its generation prompt, special-token text parsed, BOS put
// first when the model asks for one and the template did not write it. For
// the token counter only: requests are rendered by the engine itself.
Result<std::vector<std::int32_t>> chat_prompt_tokens(const Engine& engine, const std::vector<ChatTurn>& turns) {
  HEARTH_ASSIGN_OR_RETURN(const std::string chat, engine.render_chat(turns, true));
  HEARTH_ASSIGN_OR_RETURN(std::vector<std::int32_t> ids, engine.tokenize(chat, /*add_special=*/false,
                                                                         /*parse_special=*/true));
  HEARTH_ASSIGN_OR_RETURN(const std::vector<std::int32_t> specials, engine.tokenize("", true, false));
  if (!specials.empty() && (ids.empty() || ids.front() != specials.front())) ids.insert(ids.begin(), specials.front());
  return ids;
}

}  // namespace

std::int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::int64_t pages_total = 0, pages_resident = 0;
  if (!(statm >> pages_total >> pages_resident)) return 0;
  return pages_resident * static_cast<std::int64_t>(sysconf(_SC_PAGESIZE));
}

EngineWorker::EngineWorker(QObject* parent) : QObject(parent) {}

EngineWorker::~EngineWorker() = default;

void EngineWorker::start() {
  clock_.start();
  flush_timer_ = new QTimer(this);
  flush_timer_->setInterval(kFlushIntervalMs);
  connect(flush_timer_, &QTimer::timeout, this, &EngineWorker::flush);
  stats_timer_ = new QTimer(this);
  stats_timer_->setInterval(kStatsIntervalMs);
  connect(stats_timer_, &QTimer::timeout, this, &EngineWorker::sampleStats);
  stats_timer_->start();
}

// The file is checked (resolved, its header and hyper-parameters read and
// planned) before the working model is let go: a file that is not a GGUF, a
// truncated one or an architecture the engine lacks fails there and the loaded
// model stays. A failure after that (while loading the weights) reopens the
// previous model. Every loadFailed() is followed by the state as it is: the
// previous model still loaded (modelLoaded() again when it was reopened) or
// modelUnloaded().
void EngineWorker::loadModel(const QString& path_or_name, const models::RunConfig& config) {
  emit loadStarted(path_or_name);
  const auto refuse = [&](const Error& error) {
    log::get("app")->warn("could not load {}: {}", path_or_name.toStdString(), error.describe());
    emit loadFailed(path_or_name, qs(error.describe()));
    if (engine_) emit modelLoaded(model_);  // the model that stays
  };
  const auto path = models::resolve_model(path_or_name.toStdString());
  if (!path) return refuse(path.error());
  if (const auto planned = models::plan(*path, config); !planned) return refuse(planned.error());
  std::optional<std::pair<QString, models::RunConfig>> previous;
  if (engine_) previous.emplace(model_.path, config_);
  dropEngine();
  const std::optional<Error> failed = open(path_or_name, config);
  if (!failed) return;
  log::get("app")->warn("could not load {}: {}", path_or_name.toStdString(), failed->describe());
  emit loadFailed(path_or_name, qs(failed->describe()));
  if (previous && open(previous->first, previous->second)) {
    log::get("app")->warn("could not reopen {}", previous->first.toStdString());
  }
  if (!engine_) emit modelUnloaded();
}

void EngineWorker::loadModelChoosingDefaults(const QString& path_or_name, const models::RunConfig& config) {
  models::RunConfig chosen = config;
  // The file is mapped only while the recommendation reads it.
  const auto recommend = [&]() -> Result<models::Recommendation> {
    HEARTH_ASSIGN_OR_RETURN(const auto path, models::resolve_model(path_or_name.toStdString()));
    HEARTH_ASSIGN_OR_RETURN(const auto file, gguf::GgufFile::open(path));
    return models::recommend(*file, models::this_machine(true), config);
  };
  const Result<models::Recommendation> recommended = recommend();
  if (recommended && recommended->fits) {
    const models::RunConfig& r = recommended->config;
    chosen.device = r.device;
    chosen.context_length = recommended->plan.context_length;
    chosen.kv_precision = r.kv_precision;
    chosen.max_sequences = r.max_sequences;
    chosen.max_batch_tokens = r.max_batch_tokens;
    ChosenDefaults out;
    out.device = qs(r.device);
    out.context_length = recommended->plan.context_length;
    out.kv_precision = QString::fromLatin1(to_string(r.kv_precision));
    for (const std::string& why : recommended->reasons) {
      out.reasons << qs(why);
      log::get("app")->info("first start, chosen for this machine: {}", why);
    }
    emit defaultsChosen(out);
  } else if (!recommended) {
    log::get("app")->warn("first start: no recommendation for {} ({}); loading with the defaults",
                          path_or_name.toStdString(), recommended.error().describe());
  } else {
    log::get("app")->warn("first start: {}", recommended->reasons.empty() ? "" : recommended->reasons.front());
  }
  loadModel(path_or_name, chosen);
}

// Loads and starts `path_or_name`; emits modelLoaded() on success. The error otherwise.
std::optional<Error> EngineWorker::open(const QString& path_or_name, const models::RunConfig& config) {
  auto opened = models::open_engine(path_or_name.toStdString(), config);
  if (!opened) return opened.error();
  engine_ = std::move(opened->engine);
  config_ = config;
  const auto& info = engine_->model_info();
  const ModelRunInfo& run = engine_->run_info();
  model_ = LoadedModel{};
  model_.path = qs(opened->path.string());
  model_.name = info.name.empty() ? qs(opened->path.filename().string()) : qs(info.name);
  model_.architecture = qs(info.architecture);
  model_.quantization = qs(run.weight_format);
  model_.device = qs(run.device);
  model_.device_name = qs(run.device_name);
  model_.device_reason = qs(run.device_reason);
  model_.chat_format = qs(run.chat_format);
  model_.kv_precision = QString::fromLatin1(to_string(run.kv_precision));
  model_.context_length = engine_->context_length();
  model_.file_bytes = QFileInfo(model_.path).size();
  applyInstruments();
  log::get("app")->info("loaded {} on {} ({}){}{}, weights {}, KV {}, {} tokens of context, chat format: {}",
                        opened->path.string(), run.device, run.device_name, run.device_reason.empty() ? "" : ": ",
                        run.device_reason, run.weight_format, to_string(run.kv_precision), model_.context_length,
                        run.chat_format);
  emit modelLoaded(model_);
  return std::nullopt;
}

// Drops the engine (cancelling what runs: each sink gets its finish event).
void EngineWorker::dropEngine() {
  if (!engine_) return;
  stopServing(tr("the model was unloaded"));
  engine_.reset();
  flush();
  active_.clear();
}

void EngineWorker::unloadModel() {
  if (!engine_) return;
  dropEngine();
  emit modelUnloaded();
}

void EngineWorker::generate(const GenerationRequest& request) {
  GenerationDone refused;
  refused.tag = request.tag;
  refused.reason = FinishReason::kError;
  if (!engine_) {
    refused.error = tr("No model is loaded.");
    return emit finished(refused);
  }
  // A continued answer is rendered by the engine too (off its loop, cancellable):
  // the chat with its generation prompt, then the answer so far.
  Request engine_request;
  engine_request.messages = request.turns;
  engine_request.continue_text = request.continue_text;
  engine_request.sampling = request.sampling;
  engine_request.max_tokens = request.max_tokens;
  engine_request.stop_strings = request.stop;
  // The engine thread only posts a wake-up; the worker drains on its own thread.
  auto sink = std::make_shared<BatchingSink>(
      [this] { QMetaObject::invokeMethod(this, &EngineWorker::flush, Qt::QueuedConnection); });
  const RequestId id = engine_->submit(std::move(engine_request), sink);
  active_[request.tag] = Active{id, sink};
  if (!flush_timer_->isActive()) flush_timer_->start();
}

// The engine's template and tokenizer helpers are thread-safe, so this runs
// here, between the worker's other events, while the engine thread decodes.
// A conversation counts as the engine tokenizes a request's messages: the
// same number as an answer's prompt_tokens.
void EngineWorker::countTokens(const TokenCountRequest& request) {
  if (!engine_) return emit tokensCounted(request.tag, -1);
  if (request.turns.empty()) {
    auto ids = engine_->tokenize(request.text, false, false);
    return emit tokensCounted(request.tag, ids ? static_cast<int>(ids->size()) : -1);
  }
  auto ids = chat_prompt_tokens(*engine_, request.turns);
  emit tokensCounted(request.tag, ids ? static_cast<int>(ids->size()) : -1);
}

void EngineWorker::cancel(qint64 tag) {
  const auto it = active_.find(tag);
  if (it != active_.end() && engine_) engine_->cancel(it->second.id);
}

void EngineWorker::shutdown() {
  served_.reset();
  engine_.reset();
  flush();
  active_.clear();
  delete flush_timer_;
  delete stats_timer_;
  flush_timer_ = stats_timer_ = nullptr;
}

void EngineWorker::flush() {
  for (auto it = active_.begin(); it != active_.end();) {
    auto drained = it->second.sink->drain();
    if (!drained.text.empty()) emit tokens(it->first, QString::fromStdString(drained.text), drained.tokens);
    if (drained.finish) {
      const qint64 tag = it->first;
      it = active_.erase(it);
      finishActive(tag, *drained.finish);
    } else {
      ++it;
    }
  }
  if (active_.empty() && flush_timer_) flush_timer_->stop();
}

void EngineWorker::finishActive(qint64 tag, const FinishEvent& event) {
  GenerationDone done;
  done.tag = tag;
  done.reason = event.reason;
  done.usage = event.usage;
  if (event.error) done.error = qs(event.error->describe());
  emit finished(done);
}

void EngineWorker::sampleStats() {
  StatsSample sample;
  sample.time_s = static_cast<double>(clock_.elapsed()) / 1000.0;
  if (engine_) sample.stats = engine_->stats();
  sample.rss_bytes = resident_bytes();
  emit statsUpdated(sample);
  pollInstruments();
}

}  // namespace hearth::app
