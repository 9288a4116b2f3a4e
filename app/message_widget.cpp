#include "app/message_widget.h"

#include <QAbstractTextDocumentLayout>
#include <QApplication>
#include <QClipboard>
#include <QContextMenuEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QStyle>
#include <QTextDocument>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

#include "app/block_view.h"
#include "app/rating_marks.h"

namespace hearth::app {

MessageWidget::MessageWidget(QWidget* parent) : QFrame(parent) {
  setObjectName(QStringLiteral("message"));
  setProperty("bubble", true);  // styled by the theme's sheet
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(14, 8, 14, 10);
  layout->setSpacing(4);
  buildHeader();
  body_ = new QVBoxLayout;
  body_->setSpacing(6);
  layout->addLayout(body_);
  stats_ = new QLabel(this);
  stats_->setObjectName(QStringLiteral("statsLabel"));
  stats_->setProperty("muted", true);
  stats_->setWordWrap(true);  // a failure's message (a URL and its cause) may be long
  stats_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  stats_->hide();
  layout->addWidget(stats_);
}

void MessageWidget::buildHeader() {
  auto* header = new QHBoxLayout;
  header->setSpacing(2);
  who_ = new QLabel(this);
  who_->setObjectName(QStringLiteral("roleLabel"));
  QFont bold = who_->font();
  bold.setBold(true);
  who_->setFont(bold);
  header->addWidget(who_);
  header->addStretch(1);
  prev_ = flat_button(QStringLiteral("\u2039"), QStringLiteral("prevBranch"), tr("Previous version"), this);
  branch_ = new QLabel(this);
  branch_->setObjectName(QStringLiteral("branchLabel"));
  branch_->setProperty("muted", true);
  next_ = flat_button(QStringLiteral("\u203a"), QStringLiteral("nextBranch"), tr("Next version"), this);
  edit_ = flat_button(tr("Edit"), QStringLiteral("editButton"), tr("Edit this message (keeps the original)"), this);
  copy_ = flat_button(tr("Copy"), QStringLiteral("copyButton"), tr("Copy the message text"), this);
  continue_ = flat_button(tr("Continue"), QStringLiteral("continueButton"),
                          tr("Go on from where the token limit cut this answer (a new version of it)"), this);
  rate_up_ = flat_button(rated_up_mark(), QStringLiteral("rateUp"), tr("A good answer"), this);
  rate_down_ = flat_button(rated_down_mark(), QStringLiteral("rateDown"), tr("A bad answer"), this);
  for (QToolButton* b : {rate_up_, rate_down_}) b->setCheckable(true);
  for (QWidget* w : {static_cast<QWidget*>(prev_), static_cast<QWidget*>(branch_), static_cast<QWidget*>(next_),
                     static_cast<QWidget*>(edit_), static_cast<QWidget*>(continue_), static_cast<QWidget*>(rate_up_),
                     static_cast<QWidget*>(rate_down_), static_cast<QWidget*>(copy_)}) {
    header->addWidget(w);
  }
  connect(rate_up_, &QToolButton::clicked, this, [this] { emit rateRequested(view_.id, view_.rating == 1 ? 0 : 1); });
  connect(rate_down_, &QToolButton::clicked, this,
          [this] { emit rateRequested(view_.id, view_.rating == -1 ? 0 : -1); });
  connect(prev_, &QToolButton::clicked, this, [this] { emit siblingRequested(view_.id, -1); });
  connect(next_, &QToolButton::clicked, this, [this] { emit siblingRequested(view_.id, +1); });
  connect(edit_, &QToolButton::clicked, this, &MessageWidget::beginEdit);
  connect(continue_, &QToolButton::clicked, this, [this] { emit continueRequested(view_.id); });
  connect(copy_, &QToolButton::clicked, this, [this] { QApplication::clipboard()->setText(view_.text); });
  static_cast<QVBoxLayout*>(layout())->addLayout(header);
}

void MessageWidget::setMessage(const MessageView& view) {
  const bool text_changed = view.text != view_.text || blocks_.empty();
  view_ = view;
  const bool user = view.role == QLatin1String("user");
  // Re-polishing restyles the children too: only when the role changes, not per streamed update.
  const bool restyle = property("role").toString() != view.role;
  setProperty("role", view.role);
  who_->setText(user ? tr("You") : view.role == QLatin1String("assistant") ? tr("Assistant") : tr("System"));
  const bool branches = view.sibling_count > 1;
  prev_->setVisible(branches);
  next_->setVisible(branches);
  branch_->setVisible(branches);
  branch_->setText(QStringLiteral("%1/%2").arg(view.sibling_index).arg(view.sibling_count));
  prev_->setEnabled(view.sibling_index > 1);
  next_->setEnabled(view.sibling_index < view.sibling_count);
  edit_->setVisible(user && !editor_);
  copy_->setVisible(!view.streaming);
  const bool rateable = view.role == QLatin1String("assistant") && !view.streaming;
  rate_up_->setVisible(rateable);
  rate_down_->setVisible(rateable);
  rate_up_->setChecked(view.rating == 1);
  rate_down_->setChecked(view.rating == -1);
  continue_->setVisible(!view.streaming && view.last && view.finish_reason == QLatin1String("length"));
  if (text_changed && !editor_) setBody(view.text.isEmpty() && view.streaming ? QStringLiteral("\u2026") : view.text);
  QString stats = view.stats;
  if (view.interrupted) stats = interruptedLine(view);
  stats_->setText(stats);
  stats_->setToolTip(view.interrupted ? view.error : QString());
  stats_->setVisible(!stats.isEmpty());
  if (restyle) {
    style()->unpolish(this);
    style()->polish(this);
  }
}

// Why an interrupted answer stopped: the failure its record names (an engine
// error, a remote stream cut, a server's error), else the app closing on it.
QString MessageWidget::interruptedLine(const MessageView& view) {
  if (!view.error.isEmpty()) return tr("interrupted: %1").arg(view.error);
  if (view.finish_reason == QLatin1String("error")) return tr("interrupted: the answer failed part-way");
  return tr("interrupted (the app closed while this answer was written)");
}

// Streaming appends to the text: only the new characters go through the
// splitter, and only blocks that changed (the open one, those it finished)
// are shown again. Anything else (another branch, an edit) starts over.
void MessageWidget::setBody(const QString& markdown) {
  if (!markdown.startsWith(fed_)) {
    qDeleteAll(blocks_);
    blocks_.clear();
    stream_.clear();
    fed_.clear();
    finished_shown_ = 0;
  }
  stream_.append(QStringView(markdown).mid(fed_.size()));
  fed_ = markdown;
  const auto& finished = stream_.finished();
  std::size_t index = finished_shown_;
  for (; index < finished.size(); ++index) showBlock(index, finished[index]);
  finished_shown_ = finished.size();
  for (const MarkdownBlock& block : stream_.open()) showBlock(index++, block);
  while (blocks_.size() > index) {
    delete blocks_.back();
    blocks_.pop_back();
  }
}

void MessageWidget::showBlock(std::size_t index, const MarkdownBlock& block) {
  if (index < blocks_.size() && blocks_[index]->kind() != block.kind) {
    delete blocks_[index];
    blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(index));
    // Later views belonged to the open part of the text: they are rebuilt too.
    while (blocks_.size() > index) {
      delete blocks_.back();
      blocks_.pop_back();
    }
  }
  if (index == blocks_.size()) {
    blocks_.push_back(new BlockView(block.kind, this));
    body_->addWidget(blocks_.back());
    if (editor_) blocks_.back()->hide();
  }
  rendered_chars_ += blocks_[index]->show(block);
}

void MessageWidget::contextMenuEvent(QContextMenuEvent* event) {
  QMenu menu(this);
  menu.setObjectName(QStringLiteral("messageMenu"));
  menu.addAction(tr("Copy"), this, [this] { QApplication::clipboard()->setText(view_.text); });
  if (edit_->isVisible()) menu.addAction(tr("Edit"), this, &MessageWidget::beginEdit);
  const bool answer = view_.role == QLatin1String("assistant");
  if (answer && view_.last && !view_.streaming) {
    menu.addAction(tr("Regenerate"), this, [this] { emit regenerateRequested(view_.id); });
  }
  if (continue_->isVisible()) menu.addAction(tr("Continue"), this, [this] { emit continueRequested(view_.id); });
  menu.exec(event->globalPos());
}

void MessageWidget::beginEdit() {
  if (editor_) return;
  editor_ = new QWidget(this);
  auto* layout = new QVBoxLayout(editor_);
  layout->setContentsMargins(0, 0, 0, 0);
  editor_text_ = new QPlainTextEdit(view_.text, editor_);
  editor_text_->setObjectName(QStringLiteral("editText"));
  // As tall as its text (2 to 14 lines), not as tall as the layout allows.
  editor_text_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  const auto fit = [e = editor_text_] {
    const QFontMetrics fm(e->font());
    const int lines = std::clamp(static_cast<int>(e->document()->documentLayout()->documentSize().height()), 2, 14);
    const int chrome = 2 * e->frameWidth() + static_cast<int>(2 * e->document()->documentMargin()) + 2;
    e->setFixedHeight(lines * fm.lineSpacing() + chrome);
  };
  connect(editor_text_->document()->documentLayout(), &QAbstractTextDocumentLayout::documentSizeChanged, editor_text_,
          fit);
  fit();
  layout->addWidget(editor_text_);
  auto* buttons = new QHBoxLayout;
  buttons->addStretch(1);
  auto* cancel = new QPushButton(tr("Cancel"), editor_);
  auto* save = new QPushButton(tr("Save && send"), editor_);
  save->setObjectName(QStringLiteral("saveEditButton"));
  save->setDefault(true);
  buttons->addWidget(cancel);
  buttons->addWidget(save);
  layout->addLayout(buttons);
  connect(cancel, &QPushButton::clicked, this, [this] { endEdit(false); });
  connect(save, &QPushButton::clicked, this, [this] { endEdit(true); });
  for (QWidget* w : blocks_) w->hide();
  body_->addWidget(editor_);
  edit_->hide();
  editor_text_->setFocus();
}

void MessageWidget::endEdit(bool save) {
  const QString text = editor_text_->toPlainText();
  editor_->deleteLater();
  editor_ = nullptr;
  editor_text_ = nullptr;
  for (QWidget* w : blocks_) w->show();
  edit_->show();
  if (save && text.trimmed() != view_.text.trimmed()) emit editRequested(view_.id, text);
}

}  // namespace hearth::app
