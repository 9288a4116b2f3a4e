#include "app/chat_controller.h"

#include <algorithm>
#include <utility>

#include "app/chat_backend.h"
#include "app/chat_model.h"
#include "app/chat_rows.h"
#include "app/conversation_list_model.h"
#include "app/engine_worker.h"
#include "app/storage_service.h"
#include "conversation/prepare.h"
#include "conversation/prompt_resolve.h"

namespace hearth::app {
namespace {

using conversation::now_ms;

// A turn begun on the storage thread: the plan, the path to show, the model's checksum.
struct NewAnswer {
  conversation::PreparedTurn turn;
  ConversationPath path;
  std::string model_sha256;
};

// The storage thread's half of starting an answer: `begin` stores the turn,
// then the path is read for the view and the model file's checksum looked up
// (hashing an unknown file once takes a while: never on the UI thread).
template <class Begin>
auto begin_answer_job(Begin begin, std::string model_path) {
  return [begin, model_path](store::Store& s) -> store::StoreResult<NewAnswer> {
    NewAnswer out;
    STORE_ASSIGN_OR_RETURN(out.turn, begin(s));
    STORE_ASSIGN_OR_RETURN(out.path, load_path(s, out.turn.conversation_id));
    out.model_sha256 = conversation::model_sha256(model_path);
    return out;
  };
}

std::string loaded_model_path(const ChatBackend* backend) {
  return backend->model() ? backend->model()->path.toStdString() : std::string();
}

}  // namespace

QString title_from_message(const QString& text) {
  QString line = text.trimmed().section(QLatin1Char('\n'), 0, 0).simplified();
  if (line.size() > 48) line = line.left(47) + QChar(0x2026);
  return line.isEmpty() ? ChatController::tr("New chat") : line;
}

ChatController::ChatController(StorageService* storage, ChatBackend* backend, QObject* parent)
    : QObject(parent),
      storage_(storage),
      backend_(backend),
      chat_(new ChatModel(this)),
      list_(new ConversationListModel(this)) {
  list_->watch(storage_);
  save_timer_.setInterval(kSaveIntervalMs);
  connect(&save_timer_, &QTimer::timeout, this, &ChatController::saveStreaming);
  connect(backend_, &ChatBackend::tokens, this, [this](qint64 tag, const QString& text, int) { onTokens(tag, text); });
  connect(backend_, &ChatBackend::finished, this, &ChatController::onFinished);
  connect(backend_, &ChatBackend::tokensCounted, this, [this](qint64 tag, int tokens) {
    if (tag != context_count_tag_ || context_count_tag_ == 0) return;
    context_count_tag_ = 0;
    if (tokens >= 0) emit contextUsage(tokens);
  });
  connect(storage_, &StorageService::error, this, [this](const QString& message) {
    pending_ = false;
    if (!unsent_.isEmpty()) emit unsentText(std::exchange(unsent_, QString()));
    emit errorOccurred(message);
    if (!generating()) emit generatingChanged(false);
  });
}

ChatController::~ChatController() {
  if (!streaming_) return;
  backend_->cancel(streaming_->message_id);
  store::FinishMessage finish;
  finish.tail = streaming_->recorder.take_unsaved();
  storage_->run(tr("finishing the answer"),
                [id = streaming_->message_id, finish](store::Store& s) { return s.finish_message(id, finish); });
}

void ChatController::reloadConversations() {
  list_->reload();
}

void ChatController::newConversation() {
  conversation_ = 0;
  next_prompt_.clear();
  emit promptPinned(QString());
  chat_->clear();
  emit conversationOpened(0);
  emit contextUsage(0);
}

namespace {

// An opened conversation: its current path and its pin (as a reference).
struct Opened {
  ConversationPath path;
  std::string pin;
};

store::StoreResult<Opened> read_opened(store::Store& s, store::Id id) {
  Opened out;
  STORE_ASSIGN_OR_RETURN(out.path, load_path(s, id));
  STORE_ASSIGN_OR_RETURN(out.pin, conversation::pinned_reference(s, id));
  return out;
}

}  // namespace

void ChatController::openConversation(qint64 id) {
  if (id == conversation_ && chat_->conversationId() == id) return;
  conversation_ = id;
  storage_->run(
      this, tr("opening conversation %1").arg(id), [id](store::Store& s) { return read_opened(s, id); },
      [this](Opened opened) {
        if (opened.path.conversation_id != conversation_) return;  // another one was opened meanwhile
        next_prompt_.clear();
        showPath(std::move(opened.path));
        emit promptPinned(QString::fromStdString(opened.pin));
      });
}

void ChatController::showPath(ConversationPath path) {
  const store::Id id = path.conversation_id;
  // Context use of the last answer: what the model held after it.
  int used = 0;
  for (const auto& row : path.rows) {
    if (row.generation) used = static_cast<int>(row.generation->prompt_tokens + row.generation->generated_tokens);
  }
  chat_->setPath(std::move(path));
  emit conversationOpened(id);
  emit contextUsage(used);
  recountContext();
}

void ChatController::recountContext() {
  context_count_tag_ = 0;
  const auto& rows = chat_->rows();
  if (rows.empty() || rows.back().generation || rows.back().message.state == store::MessageState::kStreaming) return;
  // What the model would hold: the path as a request sends it (the plain
  // system prompt first unless the conversation has its own).
  TokenCountRequest request;
  const bool own_system =
      std::any_of(rows.begin(), rows.end(), [](const ChatRow& r) { return r.message.role == store::Role::kSystem; });
  if (!own_system && !system_prompt_.trimmed().isEmpty())
    request.turns.push_back({"system", system_prompt_.toStdString()});
  for (const ChatRow& r : rows) request.turns.push_back({store::to_string(r.message.role), r.message.content});
  static qint64 next_tag = 0;
  request.tag = context_count_tag_ = ++next_tag;
  backend_->countTokens(request);
}

void ChatController::showMessage(qint64 message_id) {
  if (generating()) return emit errorOccurred(tr("Wait for the current answer to finish, or stop it."));
  storage_->run(
      this, tr("opening message %1").arg(message_id),
      [message_id](store::Store& s) -> store::StoreResult<Opened> {
        STORE_ASSIGN_OR_RETURN(const store::Message m, s.get_message(message_id));
        STORE_TRY(s.switch_branch(message_id));
        return read_opened(s, m.conversation_id);
      },
      [this, message_id](Opened opened) {
        conversation_ = opened.path.conversation_id;
        next_prompt_.clear();
        showPath(std::move(opened.path));
        emit promptPinned(QString::fromStdString(opened.pin));
        emit messageShown(message_id);
      });
}

bool ChatController::refuseWhileBusy() {
  if (generating()) {
    emit errorOccurred(tr("Wait for the current answer to finish, or stop it."));
    return true;
  }
  if (!backend_->model()) {
    emit errorOccurred(tr("No model is loaded. Load one from the model bar."));
    return true;
  }
  return false;
}

conversation::TurnSettings ChatController::turnSettings() const {
  conversation::TurnSettings settings;
  if (conversation_ == 0 && !next_prompt_.isEmpty()) settings.prompt = next_prompt_.toStdString();
  settings.sampling = sampling_;  // seed 0: conversation/ picks a fresh one per answer (Regenerate differs)
  settings.max_tokens = max_tokens_;
  if (!system_prompt_.trimmed().isEmpty()) settings.system_prompt = system_prompt_.toStdString();
  return settings;
}

void ChatController::send(const QString& text) {
  beginSend(text, {}, true);
}

void ChatController::sendWithVariables(const QString& text, const std::map<std::string, std::string>& values) {
  beginSend(text, values, false);
}

void ChatController::cancelVariables(const QString& text) {
  emit unsentText(text);
}

// With ask_for_variables, a prompt whose {{variables}} have no value (given
// or remembered by the conversation) holds the send: variablesNeeded() asks
// for them and nothing is written.
void ChatController::beginSend(const QString& text, conversation::Variables variables, bool ask_for_variables) {
  if (text.trimmed().isEmpty() || refuseWhileBusy()) return;
  pending_ = true;
  emit generatingChanged(true);
  conversation::SendInput input;
  input.conversation_id = conversation_;
  if (!chat_->rows().empty() && conversation_ != 0) input.parent = chat_->rows().back().message.id;
  input.use_current_leaf = false;  // the answer follows what the view shows
  input.text = text.toStdString();
  conversation::TurnSettings settings = turnSettings();
  settings.variables = std::move(variables);
  struct Started {
    std::optional<NewAnswer> answer;
    conversation::NeededVariables needed;
  };
  auto begin =
      begin_answer_job([input, settings](store::Store& s) { return conversation::begin_send(s, input, settings); },
                       loaded_model_path(backend_));
  unsent_ = text;  // until the store has it: handed back to the input box if the write fails
  storage_->write(
      this, tr("saving your message"),
      [input, settings, begin, ask_for_variables](store::Store& s) -> store::StoreResult<Started> {
        Started out;
        if (ask_for_variables) {
          STORE_ASSIGN_OR_RETURN(out.needed, conversation::variables_needed(s, input.conversation_id, settings.prompt,
                                                                            settings.variables));
          if (!out.needed.missing.empty()) return out;
        }
        STORE_ASSIGN_OR_RETURN(out.answer, begin(s));
        return out;
      },
      [this, text](Started started) {
        unsent_.clear();
        if (!started.answer) {
          pending_ = false;
          emit generatingChanged(false);
          QStringList names;
          for (const auto& n : started.needed.names) names << QString::fromStdString(n);
          QVariantMap remembered;
          for (const auto& [k, v] : started.needed.remembered)
            remembered[QString::fromStdString(k)] = QString::fromStdString(v);
          emit variablesNeeded(text, QString::fromStdString(started.needed.prompt), names, remembered);
          return;
        }
        NewAnswer& a = *started.answer;
        next_prompt_.clear();
        conversation_ = a.turn.conversation_id;
        startAnswer(std::move(a.turn), std::move(a.path), a.model_sha256);
      });
}

void ChatController::regenerate() {
  if (chat_->rows().empty() || refuseWhileBusy()) return;
  const store::Id last_id = chat_->rows().back().message.id;
  pending_ = true;
  emit generatingChanged(true);
  storage_->write(
      this, tr("starting a new answer"),
      begin_answer_job([last_id, settings = turnSettings()](
                           store::Store& s) { return conversation::begin_regenerate(s, last_id, settings); },
                       loaded_model_path(backend_)),
      [this](NewAnswer a) { startAnswer(std::move(a.turn), std::move(a.path), a.model_sha256); });
}

void ChatController::editMessage(qint64 message_id, const QString& text) {
  if (text.trimmed().isEmpty() || refuseWhileBusy()) return;
  pending_ = true;
  emit generatingChanged(true);
  storage_->write(
      this, tr("saving the edited message"),
      begin_answer_job([message_id, content = text.toStdString(), settings = turnSettings()](
                           store::Store& s) { return conversation::begin_edit(s, message_id, content, settings); },
                       loaded_model_path(backend_)),
      [this](NewAnswer a) { startAnswer(std::move(a.turn), std::move(a.path), a.model_sha256); });
}

void ChatController::startAnswer(conversation::PreparedTurn turn, ConversationPath path,
                                 const std::string& model_sha256) {
  pending_ = false;
  GenerationRequest request;
  request.tag = turn.answer_id;
  request.turns = turn.messages;
  request.sampling = turn.sampling;
  request.max_tokens = turn.max_tokens;
  request.stop = turn.stop;
  conversation::ModelIdentity model;
  if (const auto& m = backend_->model()) {
    model = {m->path.toStdString(),         model_sha256,
             m->quantization.toStdString(), m->kv_precision.toStdString(),
             m->device.toStdString(),       m->name.toStdString()};
  }
  const store::Id answer_id = turn.answer_id, conversation_id = turn.conversation_id;
  streaming_.emplace(Streaming{answer_id, conversation_id, {std::move(turn), std::move(model), now_ms()}});
  if (path.conversation_id == conversation_) showPath(std::move(path));
  save_timer_.start();
  backend_->generate(request);
}

void ChatController::stop() {
  if (streaming_) backend_->cancel(streaming_->message_id);
}

void ChatController::onTokens(qint64 tag, const QString& text) {
  if (!streaming_ || streaming_->message_id != tag) return;
  streaming_->recorder.add(text.toStdString());
  chat_->appendText(tag, text);
}

void ChatController::saveStreaming() {
  if (!streaming_ || !streaming_->recorder.has_unsaved()) return;
  storage_->run(tr("saving the answer"), [id = streaming_->message_id, text = streaming_->recorder.take_unsaved()](
                                             store::Store& s) { return s.append_streaming(id, text); });
}

void ChatController::onFinished(const GenerationDone& done) {
  if (!streaming_ || streaming_->message_id != done.tag) return;
  save_timer_.stop();
  const conversation::AnswerEnd end{done.reason, done.usage, done.error.toStdString()};
  const store::FinishMessage finish = streaming_->recorder.finish(end, now_ms(), resident_bytes());
  chat_->setFinished(done.tag, finish.state, finish.generation);
  storage_->write(tr("finishing the answer"),
                  [id = done.tag, finish](store::Store& s) { return s.finish_message(id, finish); });
  const store::Id conv = streaming_->conversation_id;
  streaming_.reset();
  if (conv == conversation_) emit contextUsage(done.usage.prompt_tokens + done.usage.generated_tokens);
  if (done.reason == FinishReason::kError) emit errorOccurred(tr("The engine stopped this answer: %1").arg(done.error));
  emit answerFinished(done);
  emit generatingChanged(false);
}

void ChatController::switchSibling(qint64 message_id, int delta) {
  if (generating()) return;
  const store::Id target = chat_->siblingAt(message_id, delta);
  if (target == 0) return;
  const store::Id conv = conversation_;
  storage_->run(
      this, tr("switching branch"),
      [conv, target](store::Store& s) -> store::StoreResult<ConversationPath> {
        STORE_TRY(s.switch_branch(target));
        return load_path(s, conv);
      },
      [this](ConversationPath path) {
        if (path.conversation_id == conversation_) showPath(std::move(path));
      });
}

void ChatController::renameConversation(qint64 id, const QString& title) {
  const QString clean = title.simplified();
  if (clean.isEmpty()) return;
  list_->rename(id, clean);  // at once; the store's change signal confirms it
  storage_->write(tr("renaming a conversation"),
                  [id, t = clean.toStdString()](store::Store& s) { return s.rename_conversation(id, t); });
}

void ChatController::deleteConversation(qint64 id) {
  if (streaming_ && streaming_->conversation_id == id) stop();
  const QString title = list_->titleOf(id);
  list_->remove(id);  // at once; the store's change signal confirms it
  if (id == conversation_) newConversation();
  storage_->write(tr("deleting a conversation"), [id](store::Store& s) { return s.delete_conversation(id); });
  emit conversationDeleted(id, title);
}

void ChatController::restoreConversation(qint64 id) {
  storage_->write(tr("restoring a conversation"), [id](store::Store& s) { return s.restore_conversation(id); });
}

void ChatController::search(const QString& text) {
  list_->setQuery(text);
}

void ChatController::showMessage(qint64 conversation_id, qint64 message_id) {
  conversation_ = conversation_id;
  struct Shown {
    ConversationPath path;
    std::string pin;
  };
  storage_->run(
      this, tr("opening the message %1").arg(message_id),
      [conversation_id, message_id](store::Store& s) -> store::StoreResult<Shown> {
        STORE_ASSIGN_OR_RETURN(const auto path, s.current_path(conversation_id));
        const bool shown = std::any_of(path.begin(), path.end(), [&](const auto& m) { return m.id == message_id; });
        if (!shown) STORE_TRY(s.switch_branch(message_id));
        Shown out;
        STORE_ASSIGN_OR_RETURN(out.path, load_path(s, conversation_id));
        STORE_ASSIGN_OR_RETURN(out.pin, conversation::pinned_reference(s, conversation_id));
        return out;
      },
      [this, message_id](Shown shown) {
        if (shown.path.conversation_id != conversation_) return;  // another one was opened meanwhile
        next_prompt_.clear();
        showPath(std::move(shown.path));
        emit promptPinned(QString::fromStdString(shown.pin));
        emit messageShown(message_id);
      });
}

void ChatController::rerun(qint64 user_message_id, const QString& prompt,
                           const conversation::SamplingOverrides& overrides) {
  if (refuseWhileBusy()) return;
  pending_ = true;
  emit generatingChanged(true);
  conversation::TurnSettings settings = turnSettings();
  settings.prompt.reset();
  if (!prompt.isEmpty()) settings.prompt = prompt.toStdString();
  settings.overrides = overrides;
  struct Rerun {
    NewAnswer answer;
    store::Id previous = 0;
  };
  storage_->write(
      this, tr("re-running message %1").arg(user_message_id),
      [user_message_id, settings,
       model_path = loaded_model_path(backend_)](store::Store& s) -> store::StoreResult<Rerun> {
        Rerun out;
        STORE_ASSIGN_OR_RETURN(out.answer.turn, conversation::begin_rerun(s, user_message_id, settings, &out.previous));
        STORE_ASSIGN_OR_RETURN(out.answer.path, load_path(s, out.answer.turn.conversation_id));
        out.answer.model_sha256 = conversation::model_sha256(model_path);
        return out;
      },
      [this](Rerun r) {
        const store::Id answer = r.answer.turn.answer_id;
        startAnswer(std::move(r.answer.turn), std::move(r.answer.path), r.answer.model_sha256);
        emit rerunStarted(r.previous, answer);
      });
}

void ChatController::rate(qint64 answer_id, store::Rating rating) {
  chat_->setRating(answer_id, rating);
  storage_->run(
      this, tr("rating an answer"),
      [answer_id, rating](store::Store& s) -> store::StoreResult<bool> {
        STORE_TRY(s.set_rating(answer_id, rating));
        return true;
      },
      [this, answer_id, rating](bool) { emit ratingChanged(answer_id, static_cast<int>(rating)); });
}

void ChatController::pinPrompt(const QString& reference) {
  if (conversation_ == 0) {
    next_prompt_ = reference;
    emit promptPinned(reference);
    return;
  }
  storage_->run(
      this, tr("pinning a prompt"),
      [id = conversation_, ref = reference.toStdString()](store::Store& s) -> store::StoreResult<std::string> {
        if (ref.empty()) {
          STORE_TRY(s.set_prompt_version(id, std::nullopt));
          return std::string();
        }
        STORE_ASSIGN_OR_RETURN(const store::ResolvedPrompt resolved, s.resolve_prompt(ref));
        STORE_TRY(conversation::pin_prompt(s, id, resolved));
        return ref;
      },
      [this](std::string ref) { emit promptPinned(QString::fromStdString(ref)); });
}

}  // namespace hearth::app
