// The chat transcript: one MessageWidget per row of the ChatModel, in a
// scroll area that follows the streaming answer while the user is at the end.
#pragma once

#include <QScrollArea>

#include <vector>

class QLabel;
class QVBoxLayout;

namespace hearth::app {

class ChatModel;
class MessageWidget;

class ChatView : public QScrollArea {
  Q_OBJECT

 public:
  explicit ChatView(ChatModel* model, QWidget* parent = nullptr);
  MessageWidget* messageAt(int row) const;
  int messageCount() const { return static_cast<int>(widgets_.size()); }
  void scrollToEnd();  // and follow the newest text again
  // Scrolls to the message and marks it (the "highlighted" property, styled
  // by the theme) until another one is; false when it is not shown.
  bool highlightMessage(qint64 message_id);
  qint64 highlightedMessage() const { return highlighted_; }

 signals:
  void siblingRequested(qint64 message_id, int delta);
  void editRequested(qint64 message_id, const QString& text);
  void continueRequested(qint64 message_id);
  void regenerateRequested(qint64 message_id);
  void rateRequested(qint64 message_id, int rating);  // store::Rating's value

 private:
  void rebuild();
  void updateRow(int row);
  void followEnd();

  ChatModel* model_;
  QWidget* content_ = nullptr;
  QVBoxLayout* column_ = nullptr;
  QLabel* placeholder_ = nullptr;
  std::vector<MessageWidget*> widgets_;
  bool at_end_ = true;  // the user has not scrolled away from the newest text
  qint64 highlighted_ = 0;
};

}  // namespace hearth::app
