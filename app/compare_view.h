// Two answers to one prompt side by side: each with its parameters (prompt
// version, model, quantization, KV, device, sampling, limits) and its
// measurements (tokens, cached tokens, TTFT, decode tok/s, finish), and the
// texts with a word diff (deleted words marked on the left, inserted on the
// right). Opened by a re-run (followRerun: it waits for the new answer) or on
// any two answers (compare).
#pragma once

#include <QWidget>

#include <optional>

#include "store/records.h"

class QLabel;
class QTextBrowser;

namespace hearth::app {

class ChatController;
class StorageService;

class CompareView : public QWidget {
  Q_OBJECT

 public:
  explicit CompareView(StorageService* storage, QWidget* parent = nullptr);

  // Waits for the controller's next rerunStarted(), then for that answer to
  // finish, and compares it with the answer it re-ran.
  void followRerun(ChatController* controller);
  void compare(qint64 old_answer_id, qint64 new_answer_id);

  bool ready() const { return ready_; }
  qint64 oldAnswer() const { return old_id_; }
  qint64 newAnswer() const { return new_id_; }
  QString oldText() const;
  QString newText() const;
  QString oldParameters() const;
  QString newParameters() const;
  int changedWords() const { return changed_words_; }

 signals:
  void compared();  // both answers are shown

 private:
  struct Side {
    store::Message message;
    std::optional<store::GenerationRecord> generation;
    std::string prompt;  // "NAME@N" of its prompt version; "" when none
  };
  void display(const Side& a, const Side& b);
  static QString parameters(const Side& side);

  StorageService* storage_;
  QLabel* status_ = nullptr;
  QLabel* old_params_ = nullptr;
  QLabel* new_params_ = nullptr;
  QTextBrowser* old_text_ = nullptr;
  QTextBrowser* new_text_ = nullptr;
  QString old_plain_, new_plain_;
  qint64 old_id_ = 0, new_id_ = 0;
  int changed_words_ = 0;
  bool ready_ = false;
};

}  // namespace hearth::app
