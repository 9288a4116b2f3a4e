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

struct MessageView {
  qint64 id = 0;
  QString role;  // "user", "assistant", "system"
  QString text;
  QString stats;
  int sibling_index = 1;  // 1-based
  int sibling_count = 1;
  bool streaming = false;
  bool interrupted = false;
};

class MessageWidget : public QFrame {
  Q_OBJECT

 public:
  explicit MessageWidget(QWidget* parent = nullptr);
  void setMessage(const MessageView& view);
  qint64 messageId() const { return view_.id; }

 signals:
  void siblingRequested(qint64 message_id, int delta);
  void editRequested(qint64 message_id, const QString& text);

 private:
  void buildHeader();
  void setBody(const QString& markdown);
  QWidget* makeBlock(const MarkdownBlock& block);
  void updateBlock(QWidget* widget, const MarkdownBlock& block);
  void beginEdit();
  void endEdit(bool save);

  MessageView view_;
  QLabel* who_ = nullptr;
  QToolButton* prev_ = nullptr;
  QLabel* branch_ = nullptr;
  QToolButton* next_ = nullptr;
  QToolButton* edit_ = nullptr;
  QToolButton* copy_ = nullptr;
  QVBoxLayout* body_ = nullptr;
  std::vector<MarkdownBlock> blocks_;
  std::vector<QWidget*> block_widgets_;
  QLabel* stats_ = nullptr;
  QWidget* editor_ = nullptr;  // non-null while editing
  QPlainTextEdit* editor_text_ = nullptr;
};

}  // namespace hearth::app
