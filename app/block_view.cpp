#include "app/block_view.h"

#include <QApplication>
#include <QClipboard>
#include <QEvent>
#include <QFontDatabase>
#include <QFrame>
#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace hearth::app {

QToolButton* flat_button(const QString& text, const QString& name, const QString& tip, QWidget* parent) {
  auto* b = new QToolButton(parent);
  b->setText(text);
  b->setObjectName(name);
  b->setToolTip(tip);
  b->setAutoRaise(true);
  b->setCursor(Qt::PointingHandCursor);
  b->setFocusPolicy(Qt::NoFocus);
  return b;
}

BlockView::BlockView(MarkdownBlock::Kind kind, QWidget* parent) : QWidget(parent), kind_(kind) {
  block_.kind = kind;
  cached_hfw_.fill(QSize(-1, -1));
  QSizePolicy policy(QSizePolicy::Preferred, QSizePolicy::Minimum);
  policy.setHeightForWidth(true);
  setSizePolicy(policy);
  if (kind == MarkdownBlock::Kind::kCode) {
    buildCode();
    return;
  }
  prose_ = new QLabel(this);
  content_ = prose_;
  prose_->setObjectName(QStringLiteral("proseText"));
  prose_->setTextFormat(Qt::MarkdownText);
  prose_->setWordWrap(true);
  prose_->setTextInteractionFlags(Qt::TextBrowserInteraction);
  prose_->setOpenExternalLinks(true);
  prose_->setFocusPolicy(Qt::NoFocus);  // selectable with the mouse; Tab skips it
  prose_->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Minimum);
}

void BlockView::buildCode() {
  auto* frame = new QFrame(this);
  frame->setObjectName(QStringLiteral("codeBlock"));
  content_ = frame;
  auto* column = new QVBoxLayout(frame);
  column->setContentsMargins(8, 4, 8, 8);
  auto* bar = new QHBoxLayout;
  language_ = new QLabel(frame);
  language_->setObjectName(QStringLiteral("codeLanguage"));
  language_->setProperty("muted", true);
  bar->addWidget(language_);
  bar->addStretch(1);
  auto* copy = flat_button(tr("Copy"), QStringLiteral("copyCodeButton"), tr("Copy the code"), frame);
  bar->addWidget(copy);
  column->addLayout(bar);
  code_column_ = new QVBoxLayout;
  code_column_->setSpacing(0);
  column->addLayout(code_column_);
  connect(copy, &QToolButton::clicked, this, [this] { QApplication::clipboard()->setText(block_.text); });
}

qsizetype BlockView::show(const MarkdownBlock& block) {
  Q_ASSERT(block.kind == kind_);
  if (block == block_ && (prose_ || !chunks_.empty())) return 0;
  qsizetype rendered = 0;
  if (prose_) {
    prose_->setText(block.text);
    rendered = block.text.size();
    block_ = block;
  } else {
    if (block.language != block_.language) {
      language_->setText(block.language);
      rendered += block.language.size();
    }
    block_.language = block.language;
    block_.closed = block.closed;
    rendered += showCode(block.text);
  }
  contentChanged();
  return rendered;
}

void BlockView::contentChanged() {
  cached_hfw_.fill(QSize(-1, -1));
  updateGeometry();
}

QSize BlockView::sizeHint() const {
  return content_->sizeHint();
}

QSize BlockView::minimumSizeHint() const {
  return content_->minimumSizeHint();
}

int BlockView::heightForWidth(int width) const {
  for (const QSize& known : cached_hfw_) {
    if (known.width() == width) return known.height();
  }
  const int height = content_->hasHeightForWidth() ? content_->heightForWidth(width) : content_->sizeHint().height();
  cached_hfw_[next_hfw_] = QSize(width, height);
  next_hfw_ = (next_hfw_ + 1) % cached_hfw_.size();
  return height;
}

void BlockView::resizeEvent(QResizeEvent*) {
  content_->setGeometry(rect());
}

void BlockView::changeEvent(QEvent* event) {
  // A new font or style changes the heights.
  if (event->type() == QEvent::FontChange || event->type() == QEvent::StyleChange) contentChanged();
  QWidget::changeEvent(event);
}

// Re-renders the chunks from the one holding the first changed character on.
qsizetype BlockView::showCode(const QString& text) {
  const QString& old = block_.text;
  qsizetype same = 0;
  const qsizetype common = std::min(old.size(), text.size());
  while (same < common && old[same] == text[same]) ++same;
  std::size_t index = 0;  // the first chunk to redo
  while (index + 1 < chunk_starts_.size() && chunk_starts_[index + 1] <= same) ++index;
  qsizetype pos = chunk_starts_.empty() ? 0 : chunk_starts_[index];
  chunk_starts_.resize(index);
  qsizetype rendered = 0;
  for (bool more = true; more; ++index) {
    // The chunk runs to its kCodeChunkLines-th newline (not shown), or to the end.
    qsizetype stop = pos;
    more = false;
    for (int lines = 0;;) {
      const qsizetype nl = text.indexOf(QLatin1Char('\n'), stop);
      if (nl < 0) {
        stop = text.size();
        break;
      }
      if (++lines == kCodeChunkLines) {
        stop = nl;
        more = true;
        break;
      }
      stop = nl + 1;
    }
    if (index == chunks_.size()) chunks_.push_back(makeChunk());
    const QString piece = text.mid(pos, stop - pos);
    if (chunks_[index]->text() != piece) {
      chunks_[index]->setText(piece);
      rendered += piece.size();
    }
    chunk_starts_.push_back(pos);
    pos = stop + 1;
  }
  while (chunks_.size() > chunk_starts_.size()) {
    delete chunks_.back();
    chunks_.pop_back();
  }
  block_.text = text;
  return rendered;
}

QLabel* BlockView::makeChunk() {
  auto* label = new QLabel(this);
  label->setObjectName(QStringLiteral("codeText"));
  label->setTextFormat(Qt::PlainText);
  label->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  label->setWordWrap(true);
  code_column_->addWidget(label);
  return label;
}

}  // namespace hearth::app
