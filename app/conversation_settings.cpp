#include "app/conversation_settings.h"

#include <optional>
#include <utility>

#include "app/storage_service.h"
#include "conversation/sampling_record.h"

namespace hearth::app {

store::ConversationSettings to_record(const GenerationSettings& g) {
  store::ConversationSettings r;
  r.sampling = conversation::to_record(g.sampling);
  r.max_tokens = g.max_tokens;
  r.system_prompt = g.system_prompt.toStdString();
  return r;
}

GenerationSettings from_record(const store::ConversationSettings& r) {
  GenerationSettings g;
  g.sampling = conversation::sampling_of(r.sampling);  // floats stored as decimals read back as the same floats
  g.max_tokens = static_cast<int>(r.max_tokens);
  g.system_prompt = QString::fromStdString(r.system_prompt);
  return g;
}

ConversationSettingsKeeper::ConversationSettingsKeeper(StorageService* storage,
                                                       std::function<GenerationSettings()> defaults, QObject* parent)
    : QObject(parent), storage_(storage), defaults_(std::move(defaults)) {
  save_timer_.setSingleShot(true);
  save_timer_.setInterval(kSaveDelayMs);
  connect(&save_timer_, &QTimer::timeout, this, &ConversationSettingsKeeper::flush);
}

ConversationSettingsKeeper::~ConversationSettingsKeeper() {
  flush();
}

GenerationSettings ConversationSettingsKeeper::current() const {
  const auto it = own_.find(current_);
  return it != own_.end() ? it->second : defaults_();
}

void ConversationSettingsKeeper::open(qint64 conversation) {
  flush();
  current_ = conversation;
  if (conversation == 0) own_.erase(0);  // a new chat starts from the defaults
  emit settingsChanged(current());
  if (conversation == 0 || loaded_[conversation]) return;
  storage_->run(
      this, tr("reading the conversation's settings"),
      [conversation](store::Store& s) { return s.conversation_settings(conversation); },
      [this, conversation](std::optional<store::ConversationSettings> stored) {
        loaded_[conversation] = true;
        if (!stored || own_.count(conversation)) return;  // an edit made meanwhile wins
        own_[conversation] = from_record(*stored);
        if (conversation == current_) emit settingsChanged(current());
      });
}

void ConversationSettingsKeeper::adoptNewChat(qint64 conversation) {
  flush();
  current_ = conversation;
  loaded_[conversation] = true;  // new: the store has nothing for it
  if (auto it = own_.find(0); it != own_.end()) {
    own_[conversation] = it->second;
    own_.erase(it);
    save(conversation);
  }
  emit settingsChanged(current());
}

void ConversationSettingsKeeper::edit(const GenerationSettings& settings) {
  own_[current_] = settings;
  emit settingsChanged(settings);
  if (current_ == 0) return;  // kept until the first send creates the conversation
  if (dirty_ != current_) flush();
  dirty_ = current_;
  save_timer_.start();
}

void ConversationSettingsKeeper::reset() {
  if (dirty_ == current_) {
    dirty_ = -1;
    save_timer_.stop();
  }
  const bool had = own_.erase(current_) != 0;
  emit settingsChanged(current());
  if (had && current_ != 0) save(current_);
}

void ConversationSettingsKeeper::defaultsChanged() {
  if (!own_.count(current_)) emit settingsChanged(current());
}

void ConversationSettingsKeeper::flush() {
  save_timer_.stop();
  if (dirty_ < 0) return;
  save(std::exchange(dirty_, -1));
}

void ConversationSettingsKeeper::save(qint64 conversation) {
  std::optional<store::ConversationSettings> record;
  if (const auto it = own_.find(conversation); it != own_.end()) record = to_record(it->second);
  storage_->run(tr("saving the conversation's settings"), [conversation, record](store::Store& s) {
    auto saved = s.set_conversation_settings(conversation, record);
    // A conversation deleted meanwhile has nothing to keep.
    if (!saved && saved.error().code == store::StoreErrorCode::kNotFound) return store::StoreResult<void>{};
    return saved;
  });
}

}  // namespace hearth::app
