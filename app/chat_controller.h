// The chat's behaviour: sending, streaming into the open conversation,
// stopping, regenerating, editing (a sibling branch) and switching branches,
// and the conversation list's operations. Talks to the store through the
// StorageService (storage thread) and to whatever answers through a
// ChatBackend (the local engine's EngineBridge, or a fake in tests); owns no
// widgets, so tests drive it without a window or a model. What a turn is
// (the pinned prompt version, the request, what is recorded) is
// conversation/'s: the controller runs its steps on the right threads.
#pragma once

#include <QObject>
#include <QStringList>
#include <QTimer>
#include <QVariantMap>

#include <map>
#include <optional>
#include <string>

#include "app/engine_types.h"
#include "conversation/recorder.h"
#include "conversation/turn.h"
#include "store/records.h"

namespace hearth::app {

class ChatModel;
class ConversationListModel;
class ChatBackend;
class StorageService;
struct ConversationPath;

class ChatController : public QObject {
  Q_OBJECT

 public:
  // A streaming answer reaches the disk at least this often.
  static constexpr int kSaveIntervalMs = conversation::kSaveIntervalMs;

  ChatController(StorageService* storage, ChatBackend* backend, QObject* parent = nullptr);
  ~ChatController() override;  // a streaming answer is finished with the text shown so far

  ChatModel* chatModel() const { return chat_; }
  ConversationListModel* conversationModel() const { return list_; }
  store::Id currentConversation() const { return conversation_; }
  bool generating() const { return streaming_.has_value() || pending_; }

  // Sampling for new answers; seed 0: a fresh seed per answer.
  const SamplingParams& sampling() const { return sampling_; }
  void setSampling(const SamplingParams& sampling) { sampling_ = sampling; }
  void setMaxTokens(int max_tokens) { max_tokens_ = max_tokens; }
  // Sent first (and recorded as the answer's system_text) when no prompt
  // version is pinned and the conversation has no system message; blank: none.
  void setSystemPrompt(const QString& prompt) { system_prompt_ = prompt; }
  const QString& systemPrompt() const { return system_prompt_; }

 public slots:
  void reloadConversations();
  void newConversation();
  void openConversation(qint64 id);
  void send(const QString& text);
  void stop();
  void regenerate();
  void editMessage(qint64 message_id, const QString& text);
  void switchSibling(qint64 message_id, int delta);
  void renameConversation(qint64 id, const QString& title);
  void deleteConversation(qint64 id);
  void restoreConversation(qint64 id);
  void search(const QString& text);
  // Pins a prompt version or label ("NAME", "NAME@3", "NAME@production"; ""
  // unpins) to the open conversation; with none open yet, the first send
  // applies and pins it. Applies from the next message on.
  void pinPrompt(const QString& reference);
  // Opens the conversation on the branch through `message_id` (switching
  // branch when the message is not on the one shown) and announces it with
  // messageShown() for the view to scroll to and highlight.
  void showMessage(qint64 conversation_id, qint64 message_id);
  // The past prompt `user_message_id` again, with its context up to it: a new
  // sibling answer (conversation/'s begin_rerun). `prompt` empty: the version
  // its latest answer used; overrides win over that answer's sampling.
  void rerun(qint64 user_message_id, const QString& prompt, const hearth::conversation::SamplingOverrides& overrides);
  // Thumbs up/down on an answer (kNone removes it); stored, and shown at once.
  void rate(qint64 answer_id, hearth::store::Rating rating);
  // The values for the {{variables}} the next send's prompt needs (after variablesNeeded()).
  void sendWithVariables(const QString& text, const std::map<std::string, std::string>& values);
  // The user declined to fill them: the text goes back to the input box.
  void cancelVariables(const QString& text);
  // The same, found from the message alone (the crash banner's links).
  void showMessage(qint64 message_id);
  // The context use of the open conversation when its last answer has no
  // record (interrupted by a crash, or not answered yet): counted by the
  // backend. Called on open, and again when a model is loaded.
  void recountContext();

 signals:
  void conversationOpened(qint64 id);
  void generatingChanged(bool generating);
  void contextUsage(int used_tokens);
  void answerFinished(const hearth::app::GenerationDone& done);
  void conversationDeleted(qint64 id, const QString& title);
  void errorOccurred(const QString& message);
  // A message could not be saved (full disk, read-only database): its text,
  // for the input box to take back so that nothing typed is lost.
  void unsentText(const QString& text);
  // The open conversation's pin changed (pinPrompt, or opening another one): "" when none.
  void promptPinned(const QString& reference);
  // showMessage() has shown the conversation with this message in it.
  void messageShown(qint64 message_id);
  // A rerun began: the answer it reran (0: none) and the new one streaming.
  void rerunStarted(qint64 previous_answer_id, qint64 answer_id);
  void ratingChanged(qint64 answer_id, int rating);  // store::Rating's value
  // A send is held because its prompt has {{variables}} without values: the
  // front end asks for them (sendWithVariables) or gives up (cancelVariables).
  // `remembered`: values to offer, by name.
  void variablesNeeded(const QString& text, const QString& prompt, const QStringList& names,
                       const QVariantMap& remembered);

 private:
  struct Streaming {
    store::Id message_id = 0;
    store::Id conversation_id = 0;
    conversation::AnswerRecorder recorder;  // the text not yet handed to the store, the record to be
  };
  void showPath(ConversationPath path);
  void startAnswer(conversation::PreparedTurn turn, ConversationPath path, const std::string& model_sha256);
  conversation::TurnSettings turnSettings() const;
  void beginSend(const QString& text, conversation::Variables variables, bool ask_for_variables);
  void onTokens(qint64 tag, const QString& text);
  void onFinished(const GenerationDone& done);
  void saveStreaming();
  bool refuseWhileBusy();

  StorageService* storage_;
  ChatBackend* backend_;
  ChatModel* chat_;
  ConversationListModel* list_;
  store::Id conversation_ = 0;  // 0: a new conversation, created by the first send
  std::optional<Streaming> streaming_;
  bool pending_ = false;  // a send / regenerate / edit is on its way through the store
  QString unsent_;        // the text of a send() the store has not confirmed yet
  QTimer save_timer_;
  SamplingParams sampling_;
  int max_tokens_ = 1024;
  QString system_prompt_;
  qint64 context_count_tag_ = 0;  // the count asked for by recountContext(); 0: none awaited
  QString next_prompt_;           // pinned by the first send of a new conversation
};

// A conversation's title from its first message: the first line, at most 48 characters.
QString title_from_message(const QString& text);

}  // namespace hearth::app
