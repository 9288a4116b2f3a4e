// One Markdown block of a message: a prose label, or a code frame (language,
// Copy button, the code in a monospace font). A code block's text is shown in
// chunks of kCodeChunkLines lines, so a streaming code block re-renders only
// its last chunk. show() returns how many characters it (re)rendered: the
// chat's streaming cost, which the tests and the benchmark read.
//
// Layout cost: a BlockView has no layout of its own and caches its height for
// a width until its text changes. Qt asks a widget with a layout for its
// minimum height-for-width by walking into that layout, and a QLabel lays its
// whole text out again for every such question; without the cache each
// streamed update re-laid every block of the answer (O(answer) per update).
#pragma once

#include <QWidget>

#include <array>
#include <vector>

#include "app/markdown_blocks.h"

class QLabel;
class QToolButton;
class QVBoxLayout;

namespace hearth::app {

struct CodeLanguage;

// A tool button that never takes keyboard focus: clicking it leaves the
// focus (and what is typed) in the input box.
QToolButton* flat_button(const QString& text, const QString& name, const QString& tip, QWidget* parent);

class BlockView : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kCodeChunkLines = 16;

  BlockView(MarkdownBlock::Kind kind, QWidget* parent);
  MarkdownBlock::Kind kind() const { return kind_; }
  const MarkdownBlock& block() const { return block_; }
  qsizetype show(const MarkdownBlock& block);

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;
  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override;

 protected:
  void resizeEvent(QResizeEvent* event) override;
  void changeEvent(QEvent* event) override;

 private:
  void buildCode();
  qsizetype showCode(const QString& text);
  QLabel* makeChunk();

  void contentChanged();

  MarkdownBlock::Kind kind_;
  MarkdownBlock block_;
  QWidget* content_ = nullptr;  // the prose label or the code frame, filling this widget
  // (width, height) of the last heightForWidth() answers: the scroll area asks
  // for two widths (with and without its scroll bar), the layout for others.
  mutable std::array<QSize, 4> cached_hfw_;
  mutable std::size_t next_hfw_ = 0;
  QLabel* prose_ = nullptr;
  QLabel* language_ = nullptr;
  QVBoxLayout* code_column_ = nullptr;
  void rehighlight();  // the colours follow the theme

  std::vector<QLabel*> chunks_;
  std::vector<qsizetype> chunk_starts_;  // offset in block_.text where each chunk starts
  // Highlighting (code_highlighter.h), when the fence names a known language:
  // each chunk's plain text and the tokenizer state it starts in.
  const CodeLanguage* code_language_ = nullptr;
  std::vector<QString> chunk_texts_;
  std::vector<int> chunk_states_;
};

}  // namespace hearth::app
