// Splits a message's Markdown into prose and fenced code blocks, so the chat
// view can give each code block its own frame and Copy button. A fence that is
// still open (an answer streaming mid-block) runs to the end of the text.
#pragma once

#include <QString>

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

// Fences are ``` or ~~~ (three or more) at the start of a line, after at most
// three spaces; a block closes on a fence of the same character, at least as long.
std::vector<MarkdownBlock> split_markdown(const QString& markdown);

}  // namespace hearth::app
