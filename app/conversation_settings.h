// The generation settings of the open conversation: its own, kept in the
// store (schema 3: they survive a restart), or the app-wide defaults from the
// settings file. The Generation panel edits them; the main window applies
// what settingsChanged() says to the panel and the controller. A new chat
// (id 0) holds its edits here until its first send creates the conversation,
// which then adopts them.
#pragma once

#include <QObject>
#include <QTimer>

#include <functional>
#include <map>

#include "app/generation_panel.h"
#include "store/records.h"

namespace hearth::app {

class StorageService;

store::ConversationSettings to_record(const GenerationSettings& settings);
GenerationSettings from_record(const store::ConversationSettings& record);

class ConversationSettingsKeeper : public QObject {
  Q_OBJECT

 public:
  // Own settings reach the store this long after the last edit (typing a
  // system prompt is one write, not one per key), and at once on a switch.
  static constexpr int kSaveDelayMs = 400;

  ConversationSettingsKeeper(StorageService* storage, std::function<GenerationSettings()> defaults,
                             QObject* parent = nullptr);
  ~ConversationSettingsKeeper() override;  // saves a pending edit

  qint64 conversation() const { return current_; }
  GenerationSettings current() const;
  bool hasOwn(qint64 conversation) const { return own_.count(conversation) != 0; }

  void open(qint64 conversation);                 // 0: a new chat, from the defaults
  void adoptNewChat(qint64 conversation);         // the new chat's first send created `conversation`
  void edit(const GenerationSettings& settings);  // the open conversation's own from now on
  void reset();                                   // the open conversation goes back to the defaults
  void defaultsChanged();                         // shows the new defaults where they apply

 signals:
  void settingsChanged(const hearth::app::GenerationSettings& settings);  // the open conversation's, in use now

 private:
  void save(qint64 conversation);
  void flush();

  StorageService* storage_;
  std::function<GenerationSettings()> defaults_;
  qint64 current_ = 0;
  std::map<qint64, GenerationSettings> own_;  // known own settings (0: the new chat's edits)
  std::map<qint64, bool> loaded_;             // conversations whose row the store has answered for
  qint64 dirty_ = -1;                         // a conversation with an edit not yet written; -1: none
  QTimer save_timer_;
};

}  // namespace hearth::app
