// Splits a message's Markdown into blocks the chat view renders one widget
// each: prose paragraphs and fenced code blocks (a frame with a Copy button).
// A fence that is still open (an answer streaming mid-block) runs to the end
// of the text.
//
// MarkdownStream does the split incrementally, so a streaming answer costs
// O(new text): a block, once finished, never changes, and only the open one
// (the last) is recomputed when text arrives.
#pragma once

#include <QString>
#include <QStringList>

#include <vector>

namespace hearth::app {

struct MarkdownBlock {
  enum class Kind { kText, kCode };
  Kind kind = Kind::kText;
  QString text;        // prose: Markdown source; code: the code, without fences
  QString language;    // code only: the fence's info string ("cpp"), may be empty
  bool closed = true;  // code only: false while its closing fence has not arrived

  bool operator==(const MarkdownBlock&) const = default;
};

// Where a block boundary can fall, by line:
// - fences are ``` or ~~~ (three or more) at the start of a line, after at most
//   three spaces; a code block closes on a fence of the same character, at
//   least as long, with no info string;
// - prose ends at a fence, or at a blank line followed by a line that starts a
//   new paragraph (not indented, not a list item): lists, loose ones included,
//   stay in one block so that their numbering and nesting render as written.
//   (Reference-style link definitions in another paragraph are not resolved.)
class MarkdownStream {
 public:
  void append(QStringView text);
  void clear() { *this = MarkdownStream(); }

  // Blocks that can no longer change, in order.
  const std::vector<MarkdownBlock>& finished() const { return finished_; }
  // The blocks after finished(): what the text since the last finished block
  // reads as now (usually one; none when it is blank). O(open block).
  std::vector<MarkdownBlock> open() const;
  std::vector<MarkdownBlock> blocks() const;  // finished() + open()

  struct Fence {
    QChar ch;
    qsizetype length = 0;
    QString info;
  };
  struct State {
    bool in_code = false;
    Fence fence;               // the open code block's
    QStringList lines;         // the open block's complete lines
    bool after_blank = false;  // prose: a blank line followed the last text line
  };

 private:
  State state_;
  QString partial_;  // the last line, still without its newline
  std::vector<MarkdownBlock> finished_;
};

std::vector<MarkdownBlock> split_markdown(const QString& markdown);

}  // namespace hearth::app
