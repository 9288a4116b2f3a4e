#include "app/block_view.h"

#include "app/code_highlighter.h"
#include "app/markdown_style.h"

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
#include <utility>

namespace hearth::app {
namespace {

bool dark_palette_in_use() {
  return QApplication::palette().color(QPalette::Window).lightness() < 128;
}

}  // namespace

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
    if (needs_styled_markdown(block.text)) {
      prose_->setTextFormat(Qt::RichText);
      prose_->setText(styled_markdown_html(block.text, palette()));
    } else {
      prose_->setTextFormat(Qt::MarkdownText);
      prose_->setText(block.text);
    }
    rendered = block.text.size();
    block_ = block;
  } else {
    if (block.language != block_.language) {
      language_->setText(block.language);
      rendered += block.language.size();
      const CodeLanguage* language = code_language(block.language);
      if (language != code_language_) {
        code_language_ = language;
        chunk_texts_.clear();  // everything again, in the new colours
        chunk_states_.clear();
      }
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
  if (event->type() == QEvent::PaletteChange && code_language_) rehighlight();
  if (event->type() == QEvent::PaletteChange && prose_ && prose_->textFormat() == Qt::RichText) {
    prose_->setText(styled_markdown_html(block_.text, palette()));
  }
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
  // The tokenizer's state where the chunk about to be shown starts.
  int state = index < chunk_states_.size() && chunk_states_[index] >= 0 ? chunk_states_[index] : kCodeStateNone;
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
    if (chunk_texts_.size() <= index) {
      chunk_texts_.resize(index + 1);
      chunk_states_.resize(index + 1, -1);
    }
    const QString piece = text.mid(pos, stop - pos);
    const int state_in = index == 0 ? kCodeStateNone : state;
    bool state_known = false;
    if (chunk_texts_[index] != piece || chunk_states_[index] != state_in || chunks_[index]->text().isEmpty()) {
      if (code_language_) {
        state = state_in;
        chunks_[index]->setTextFormat(Qt::RichText);
        chunks_[index]->setText(highlight_code_html(*code_language_, piece, state, dark_palette_in_use()));
        state_known = true;
      } else {
        chunks_[index]->setTextFormat(Qt::PlainText);
        chunks_[index]->setText(piece);
      }
      chunk_texts_[index] = piece;
      chunk_states_[index] = state_in;
      rendered += piece.size();
    }
    if (code_language_ && !state_known) {  // the state the next chunk starts in
      state = state_in;
      for (const QStringView line : QStringView(piece).split(QLatin1Char('\n'))) {
        highlight_code_line(*code_language_, line, state);
      }
    }
    chunk_starts_.push_back(pos);
    pos = stop + 1;
  }
  while (chunks_.size() > chunk_starts_.size()) {
    delete chunks_.back();
    chunks_.pop_back();
  }
  chunk_texts_.resize(chunks_.size());
  chunk_states_.resize(chunks_.size());
  block_.text = text;
  return rendered;
}

void BlockView::rehighlight() {
  std::fill(chunk_states_.begin(), chunk_states_.end(), -1);
  const QString text = std::exchange(block_.text, QString());
  showCode(text);
  contentChanged();
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
