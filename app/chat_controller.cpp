#include "app/chat_controller.h"

#include <QDateTime>
#include <QRandomGenerator>

#include <filesystem>
#include <utility>

#include "app/chat_backend.h"
#include "app/chat_model.h"
#include "app/chat_rows.h"
#include "app/conversation_list_model.h"
#include "app/engine_worker.h"
#include "app/storage_service.h"
#include "models/catalog.h"

namespace hearth::app {
namespace {

store::TimeMs now_ms() {
  return QDateTime::currentMSecsSinceEpoch();
}

// The conversation as the model sees it: every message on the path except
// the empty answer being generated.
std::vector<ChatTurn> turns_of(const ConversationPath& path, store::Id answer_id) {
  std::vector<ChatTurn> turns;
  for (const auto& row : path.rows) {
    if (row.message.id == answer_id) break;
    turns.push_back({store::to_string(row.message.role), row.message.content});
  }
  return turns;
}

struct NewAnswer {
  ConversationPath path;
  store::Id answer_id = 0;
};

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
  finish.tail = std::move(streaming_->unsaved);
  storage_->run(tr("finishing the answer"),
                [id = streaming_->message_id, finish](store::Store& s) { return s.finish_message(id, finish); });
}

void ChatController::reloadConversations() {
  list_->reload();
}

void ChatController::newConversation() {
  conversation_ = 0;
  chat_->clear();
  emit conversationOpened(0);
  emit contextUsage(0);
}

void ChatController::openConversation(qint64 id) {
  if (id == conversation_ && chat_->conversationId() == id) return;
  conversation_ = id;
  storage_->run(
      this, tr("opening conversation %1").arg(id), [id](store::Store& s) { return load_path(s, id); },
      [this](ConversationPath path) {
        if (path.conversation_id != conversation_) return;  // another one was opened meanwhile
        showPath(std::move(path));
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

void ChatController::send(const QString& text) {
  if (text.trimmed().isEmpty() || refuseWhileBusy()) return;
  pending_ = true;
  emit generatingChanged(true);
  const store::Id conversation = conversation_;
  std::optional<store::Id> parent;
  if (!chat_->rows().empty() && conversation != 0) parent = chat_->rows().back().message.id;
  const std::string content = text.toStdString();
  const std::string title = title_from_message(text).toStdString();
  unsent_ = text;  // until the store has it: handed back to the input box if the write fails
  storage_->write(
      this, tr("saving your message"),
      [conversation, parent, content, title](store::Store& s) -> store::StoreResult<NewAnswer> {
        store::Id conv = conversation;
        if (conv == 0) {
          STORE_ASSIGN_OR_RETURN(conv, s.create_conversation(title));
        }
        STORE_ASSIGN_OR_RETURN(const store::Id user, s.add_message({conv, parent, store::Role::kUser, content}));
        NewAnswer out;
        STORE_ASSIGN_OR_RETURN(out.answer_id, s.begin_answer(conv, user));
        STORE_ASSIGN_OR_RETURN(out.path, load_path(s, conv));
        return out;
      },
      [this](NewAnswer a) {
        unsent_.clear();
        conversation_ = a.path.conversation_id;
        startAnswer(std::move(a.path), a.answer_id);
      });
}

void ChatController::regenerate() {
  if (chat_->rows().empty() || refuseWhileBusy()) return;
  const ChatRow& last = chat_->rows().back();
  const store::Id last_id = last.message.id;
  const bool is_answer = last.message.role == store::Role::kAssistant;
  const store::Id conv = conversation_;
  pending_ = true;
  emit generatingChanged(true);
  storage_->write(
      this, tr("starting a new answer"),
      [conv, last_id, is_answer](store::Store& s) -> store::StoreResult<NewAnswer> {
        NewAnswer out;
        if (is_answer) {
          STORE_ASSIGN_OR_RETURN(out.answer_id, s.regenerate(last_id));
        } else {
          STORE_ASSIGN_OR_RETURN(out.answer_id, s.begin_answer(conv, last_id));
        }
        STORE_ASSIGN_OR_RETURN(out.path, load_path(s, conv));
        return out;
      },
      [this](NewAnswer a) { startAnswer(std::move(a.path), a.answer_id); });
}

void ChatController::editMessage(qint64 message_id, const QString& text) {
  if (text.trimmed().isEmpty() || refuseWhileBusy()) return;
  const store::Id conv = conversation_;
  const std::string content = text.toStdString();
  pending_ = true;
  emit generatingChanged(true);
  storage_->write(
      this, tr("saving the edited message"),
      [conv, message_id, content](store::Store& s) -> store::StoreResult<NewAnswer> {
        STORE_ASSIGN_OR_RETURN(const store::Id user, s.edit_message(message_id, content));
        NewAnswer out;
        STORE_ASSIGN_OR_RETURN(out.answer_id, s.begin_answer(conv, user));
        STORE_ASSIGN_OR_RETURN(out.path, load_path(s, conv));
        return out;
      },
      [this](NewAnswer a) { startAnswer(std::move(a.path), a.answer_id); });
}

void ChatController::startAnswer(ConversationPath path, store::Id answer_id) {
  pending_ = false;
  GenerationRequest request;
  request.tag = answer_id;
  request.turns = turns_of(path, answer_id);
  request.sampling = sampling_;
  // Seed 0 means "a fresh seed per answer", so Regenerate gives a new answer.
  if (request.sampling.seed == 0) request.sampling.seed = QRandomGenerator::global()->generate64();
  request.max_tokens = max_tokens_;
  streaming_ = Streaming{answer_id, path.conversation_id, {}, now_ms(), request.sampling};
  if (path.conversation_id == conversation_) showPath(std::move(path));
  save_timer_.start();
  backend_->generate(request);
}

void ChatController::stop() {
  if (streaming_) backend_->cancel(streaming_->message_id);
}

void ChatController::onTokens(qint64 tag, const QString& text) {
  if (!streaming_ || streaming_->message_id != tag) return;
  streaming_->unsaved += text.toStdString();
  chat_->appendText(tag, text);
}

void ChatController::saveStreaming() {
  if (!streaming_ || streaming_->unsaved.empty()) return;
  storage_->run(tr("saving the answer"), [id = streaming_->message_id, text = std::move(streaming_->unsaved)](
                                             store::Store& s) { return s.append_streaming(id, text); });
  streaming_->unsaved.clear();
}

store::GenerationRecord ChatController::makeRecord(const GenerationDone& done) const {
  store::GenerationRecord g;
  g.message_id = done.tag;
  if (const auto& model = backend_->model()) {
    g.model_path = model->path.toStdString();
    const std::string file = std::filesystem::path(g.model_path).filename().string();
    if (const auto* entry = models::builtin_catalog().find_file(file)) g.model_sha256 = entry->sha256;
    g.quantization = model->quantization.toStdString();
    g.device = model->device.toStdString();
    g.kv_precision = model->kv_precision.toStdString();
  }
  const SamplingParams& p = streaming_ ? streaming_->sampling : sampling_;
  g.sampling = {p.temperature,      p.top_k,          p.top_p, p.min_p, p.repeat_penalty, p.frequency_penalty,
                p.presence_penalty, p.penalty_last_n, p.seed};
  g.prompt_tokens = done.usage.prompt_tokens;
  g.cached_tokens = done.usage.cached_tokens;
  g.generated_tokens = done.usage.generated_tokens;
  g.ttft_ms = done.usage.ttft_ms;
  g.prefill_tok_s = done.usage.prefill_tps;
  g.decode_tok_s = done.usage.decode_tps;
  g.itl_p50_ms = done.usage.itl_p50_ms;
  g.itl_p95_ms = done.usage.itl_p95_ms;
  g.peak_memory_bytes = resident_bytes();
  g.finish_reason = to_string(done.reason);
  g.started_ms = streaming_ ? streaming_->started_ms : now_ms();
  g.finished_ms = now_ms();
  return g;
}

void ChatController::onFinished(const GenerationDone& done) {
  if (!streaming_ || streaming_->message_id != done.tag) return;
  save_timer_.stop();
  store::FinishMessage finish;
  finish.tail = std::move(streaming_->unsaved);
  finish.state = store::MessageState::kComplete;
  finish.generation = makeRecord(done);
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

}  // namespace hearth::app
