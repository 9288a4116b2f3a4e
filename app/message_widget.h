// One message in the chat view: who wrote it, its Markdown (code blocks in
// frames with a Copy button), branch navigation "< 2/3 >" when the turn has
// other versions, Edit for the user's messages, and the answer's stats line.
#pragma once

#include <QFrame>

#include <vector>

#include "app/markdown_blocks.h"

class QLabel;
class QPlainTextEdit;
class QPushButton;
class QToolButton;
class QVBoxLayout;
class QWidget;

namespace hearth::app {

class BlockView;

struct MessageView {
  qint64 id = 0;
  QString role;  // "user", "assistant", "system"
  QString text;
  QString stats;
  int sibling_index = 1;  // 1-based
  int sibling_count = 1;
  bool streaming = false;
  bool interrupted = false;
  QString finish_reason;  // "length": cut at the token limit (Continue is offered on the last answer)
  bool last = false;      // the conversation's newest message
  int rating = 0;         // answers: store::Rating (1 up, -1 down, 0 none)
  QString error;          // an answer that failed part-way (finish_reason "error"): why, as recorded
};

class MessageWidget : public QFrame {
  Q_OBJECT

 public:
  explicit MessageWidget(QWidget* parent = nullptr);
  void setMessage(const MessageView& view);
  qint64 messageId() const { return view_.id; }
  // Characters of Markdown or code (re)rendered since this widget was made:
  // what streaming costs. A streamed answer adds O(new text) per update.
  qint64 renderedCharacters() const { return rendered_chars_; }

 signals:
  void siblingRequested(qint64 message_id, int delta);
  void editRequested(qint64 message_id, const QString& text);
  void continueRequested(qint64 message_id);
  void regenerateRequested(qint64 message_id);
  void rateRequested(qint64 message_id, int rating);  // clicking the lit thumb again removes it (0)

 protected:
  void contextMenuEvent(QContextMenuEvent* event) override;  // Copy, Edit, Regenerate, Continue

 private:
  void buildHeader();
  static QString interruptedLine(const MessageView& view);
  void setBody(const QString& markdown);
  void showBlock(std::size_t index, const MarkdownBlock& block);
  void beginEdit();
  void endEdit(bool save);

  MessageView view_;
  QLabel* who_ = nullptr;
  QToolButton* prev_ = nullptr;
  QLabel* branch_ = nullptr;
  QToolButton* next_ = nullptr;
  QToolButton* edit_ = nullptr;
  QToolButton* copy_ = nullptr;
  QToolButton* continue_ = nullptr;
  QToolButton* rate_up_ = nullptr;
  QToolButton* rate_down_ = nullptr;
  QVBoxLayout* body_ = nullptr;
  MarkdownStream stream_;
  QString fed_;                     // the text given to stream_ so far
  std::size_t finished_shown_ = 0;  // stream_.finished() blocks already shown (they never change)
  std::vector<BlockView*> blocks_;  // one per block: stream_.blocks()
  qint64 rendered_chars_ = 0;
  QLabel* stats_ = nullptr;
  QWidget* editor_ = nullptr;  // non-null while editing
  QPlainTextEdit* editor_text_ = nullptr;
};

}  // namespace hearth::app
