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
  // Messages are at most this wide (a readable line, as in every chat app);
  // a wider window centres them.
  static constexpr int kMaxMessageWidth = 880;

  explicit ChatView(ChatModel* model, QWidget* parent = nullptr);
  MessageWidget* messageAt(int row) const;
  int messageCount() const { return static_cast<int>(widgets_.size()); }
  void scrollToEnd();  // and follow the newest text again
  // Scrolls to the message (when shown) and marks it for a few seconds
  // (property "highlighted", styled by the theme). False when it is not shown.
  bool highlightMessage(qint64 message_id);
  qint64 highlightedMessage() const { return highlighted_; }

 signals:
  void siblingRequested(qint64 message_id, int delta);
  void editRequested(qint64 message_id, const QString& text);
  void continueRequested(qint64 message_id);
  void regenerateRequested(qint64 message_id);
  void rateRequested(qint64 message_id, int rating);  // store::Rating's value

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void rebuild();
  void updateRow(int row);
  void followEnd();

  ChatModel* model_;
  QWidget* content_ = nullptr;
  QVBoxLayout* column_ = nullptr;
  QLabel* placeholder_ = nullptr;
  std::vector<MessageWidget*> widgets_;
  void setHighlighted(MessageWidget* w, bool on);

  bool at_end_ = true;  // the user has not scrolled away from the newest text
  qint64 highlighted_ = 0;
};

}  // namespace hearth::app
