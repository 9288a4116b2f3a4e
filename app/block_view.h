// One Markdown block of a message: a prose label, or a code frame (language,
// Copy button, the code in a monospace font). A code block's text is shown in
// chunks of kCodeChunkLines lines, so a streaming code block re-renders only
// its last chunk. show() returns how many characters it (re)rendered: the
// chat's streaming cost, which the tests and the benchmark read.
#pragma once

#include <QWidget>

#include <vector>

#include "app/markdown_blocks.h"

class QLabel;
class QToolButton;
class QVBoxLayout;

namespace hearth::app {

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

 private:
  void buildCode();
  qsizetype showCode(const QString& text);
  QLabel* makeChunk();

  MarkdownBlock::Kind kind_;
  MarkdownBlock block_;
  QLabel* prose_ = nullptr;
  QLabel* language_ = nullptr;
  QVBoxLayout* code_column_ = nullptr;
  std::vector<QLabel*> chunks_;
  std::vector<qsizetype> chunk_starts_;  // offset in block_.text where each chunk starts
};

}  // namespace hearth::app
