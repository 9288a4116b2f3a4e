#include "app/message_widget.h"

#include <QApplication>
#include <QClipboard>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QStyle>
#include <QToolButton>
#include <QVBoxLayout>

namespace hearth::app {
namespace {

QToolButton* small_button(const QString& text, const QString& name, const QString& tip, QWidget* parent) {
  auto* b = new QToolButton(parent);
  b->setText(text);
  b->setObjectName(name);
  b->setToolTip(tip);
  b->setAutoRaise(true);
  b->setCursor(Qt::PointingHandCursor);
  return b;
}

QLabel* prose_label(QWidget* parent) {
  auto* label = new QLabel(parent);
  label->setTextFormat(Qt::MarkdownText);
  label->setWordWrap(true);
  label->setTextInteractionFlags(Qt::TextBrowserInteraction);
  label->setOpenExternalLinks(true);
  label->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Minimum);
  return label;
}

}  // namespace

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
  prev_ = small_button(QStringLiteral("\u2039"), QStringLiteral("prevBranch"), tr("Previous version"), this);
  branch_ = new QLabel(this);
  branch_->setObjectName(QStringLiteral("branchLabel"));
  branch_->setProperty("muted", true);
  next_ = small_button(QStringLiteral("\u203a"), QStringLiteral("nextBranch"), tr("Next version"), this);
  edit_ = small_button(tr("Edit"), QStringLiteral("editButton"), tr("Edit this message (keeps the original)"), this);
  copy_ = small_button(tr("Copy"), QStringLiteral("copyButton"), tr("Copy the message text"), this);
  for (QWidget* w : {static_cast<QWidget*>(prev_), static_cast<QWidget*>(branch_), static_cast<QWidget*>(next_),
                     static_cast<QWidget*>(edit_), static_cast<QWidget*>(copy_)}) {
    header->addWidget(w);
  }
  connect(prev_, &QToolButton::clicked, this, [this] { emit siblingRequested(view_.id, -1); });
  connect(next_, &QToolButton::clicked, this, [this] { emit siblingRequested(view_.id, +1); });
  connect(edit_, &QToolButton::clicked, this, &MessageWidget::beginEdit);
  connect(copy_, &QToolButton::clicked, this, [this] { QApplication::clipboard()->setText(view_.text); });
  static_cast<QVBoxLayout*>(layout())->addLayout(header);
}

void MessageWidget::setMessage(const MessageView& view) {
  const bool text_changed = view.text != view_.text || block_widgets_.empty();
  view_ = view;
  const bool user = view.role == QLatin1String("user");
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
  if (text_changed && !editor_) setBody(view.text.isEmpty() && view.streaming ? QStringLiteral("\u2026") : view.text);
  QString stats = view.stats;
  if (view.interrupted) stats = tr("interrupted (the app closed while this answer was written)");
  stats_->setText(stats);
  stats_->setVisible(!stats.isEmpty());
  style()->unpolish(this);
  style()->polish(this);
}

void MessageWidget::setBody(const QString& markdown) {
  std::vector<MarkdownBlock> blocks = split_markdown(markdown);
  bool same_shape = blocks.size() == blocks_.size();
  for (std::size_t i = 0; same_shape && i < blocks.size(); ++i) same_shape = blocks[i].kind == blocks_[i].kind;
  if (same_shape) {
    // Streaming: usually only the last block grew; update in place, no relayout of the rest.
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      if (!(blocks[i] == blocks_[i])) updateBlock(block_widgets_[i], blocks[i]);
    }
  } else {
    for (QWidget* w : block_widgets_) delete w;
    block_widgets_.clear();
    for (const auto& block : blocks) {
      block_widgets_.push_back(makeBlock(block));
      body_->addWidget(block_widgets_.back());
    }
  }
  blocks_ = std::move(blocks);
}

QWidget* MessageWidget::makeBlock(const MarkdownBlock& block) {
  if (block.kind == MarkdownBlock::Kind::kText) {
    auto* label = prose_label(this);
    label->setText(block.text);
    return label;
  }
  auto* frame = new QFrame(this);
  frame->setObjectName(QStringLiteral("codeBlock"));
  auto* layout = new QVBoxLayout(frame);
  layout->setContentsMargins(8, 4, 8, 8);
  auto* bar = new QHBoxLayout;
  auto* language = new QLabel(block.language, frame);
  language->setObjectName(QStringLiteral("codeLanguage"));
  language->setProperty("muted", true);
  bar->addWidget(language);
  bar->addStretch(1);
  auto* copy = small_button(tr("Copy"), QStringLiteral("copyCodeButton"), tr("Copy the code"), frame);
  bar->addWidget(copy);
  layout->addLayout(bar);
  auto* code = new QLabel(frame);
  code->setObjectName(QStringLiteral("codeText"));
  code->setTextFormat(Qt::PlainText);
  code->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  code->setTextInteractionFlags(Qt::TextSelectableByMouse);
  code->setWordWrap(true);
  code->setText(block.text);
  layout->addWidget(code);
  connect(copy, &QToolButton::clicked, this, [code] { QApplication::clipboard()->setText(code->text()); });
  return frame;
}

void MessageWidget::updateBlock(QWidget* widget, const MarkdownBlock& block) {
  if (block.kind == MarkdownBlock::Kind::kText) {
    static_cast<QLabel*>(widget)->setText(block.text);
    return;
  }
  widget->findChild<QLabel*>(QStringLiteral("codeLanguage"))->setText(block.language);
  widget->findChild<QLabel*>(QStringLiteral("codeText"))->setText(block.text);
}

void MessageWidget::beginEdit() {
  if (editor_) return;
  editor_ = new QWidget(this);
  auto* layout = new QVBoxLayout(editor_);
  layout->setContentsMargins(0, 0, 0, 0);
  editor_text_ = new QPlainTextEdit(view_.text, editor_);
  editor_text_->setObjectName(QStringLiteral("editText"));
  editor_text_->setMinimumHeight(80);
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
  for (QWidget* w : block_widgets_) w->hide();
  body_->addWidget(editor_);
  edit_->hide();
  editor_text_->setFocus();
}

void MessageWidget::endEdit(bool save) {
  const QString text = editor_text_->toPlainText();
  editor_->deleteLater();
  editor_ = nullptr;
  editor_text_ = nullptr;
  for (QWidget* w : block_widgets_) w->show();
  edit_->show();
  if (save && text.trimmed() != view_.text.trimmed()) emit editRequested(view_.id, text);
}

}  // namespace hearth::app
