#include "app/markdown_blocks.h"

#include <QRegularExpression>

namespace hearth::app {
namespace {

using Fence = MarkdownStream::Fence;
using State = MarkdownStream::State;

// The fence that `line` opens or closes, if it is one.
bool parse_fence(const QString& line, Fence& fence) {
  qsizetype i = 0;
  while (i < line.size() && i < 3 && line[i] == QLatin1Char(' ')) ++i;
  if (i >= line.size() || (line[i] != QLatin1Char('`') && line[i] != QLatin1Char('~'))) return false;
  const QChar ch = line[i];
  qsizetype n = 0;
  while (i + n < line.size() && line[i + n] == ch) ++n;
  if (n < 3) return false;
  fence.ch = ch;
  fence.length = n;
  fence.info = line.mid(i + n).trimmed();
  return !(ch == QLatin1Char('`') && fence.info.contains(QLatin1Char('`')));
}

bool is_blank(const QString& line) {
  return line.trimmed().isEmpty();
}

// A line after a blank one that begins a new block rather than continuing a
// list (an item, or a continuation indented by two or more spaces or a tab).
bool starts_paragraph(const QString& line) {
  static const QRegularExpression list_item(QStringLiteral("^ ?([-*+]|\\d{1,9}[.)])(\\s|$)"));
  if (line.startsWith(QLatin1String("  ")) || line.startsWith(QLatin1Char('\t'))) return false;
  return !list_item.match(line).hasMatch();
}

// The open prose, without its trailing blank lines; nothing when all blank.
void flush_prose(State& s, std::vector<MarkdownBlock>& out) {
  while (!s.lines.isEmpty() && is_blank(s.lines.back())) s.lines.removeLast();
  if (!s.lines.isEmpty()) out.push_back({MarkdownBlock::Kind::kText, s.lines.join(QLatin1Char('\n')), {}, true});
  s.lines.clear();
  s.after_blank = false;
}

// One complete line; blocks it finishes go to `out`.
void feed_line(State& s, const QString& line, std::vector<MarkdownBlock>& out) {
  Fence fence;
  if (s.in_code) {
    if (parse_fence(line, fence) && fence.ch == s.fence.ch && fence.length >= s.fence.length && fence.info.isEmpty()) {
      out.push_back({MarkdownBlock::Kind::kCode, s.lines.join(QLatin1Char('\n')), s.fence.info, true});
      s = State{};
    } else {
      s.lines.append(line);
    }
    return;
  }
  if (parse_fence(line, fence)) {
    flush_prose(s, out);
    s.in_code = true;
    s.fence = fence;
    return;
  }
  if (is_blank(line)) {
    if (!s.lines.isEmpty()) {
      s.lines.append(line);
      s.after_blank = true;
    }
    return;
  }
  if (s.after_blank && starts_paragraph(line)) flush_prose(s, out);
  s.lines.append(line);
  s.after_blank = false;
}

// The end of the text: the open block as it stands (a code block unclosed).
void flush_open(State& s, std::vector<MarkdownBlock>& out) {
  if (s.in_code) {
    out.push_back({MarkdownBlock::Kind::kCode, s.lines.join(QLatin1Char('\n')), s.fence.info, false});
    s = State{};
    return;
  }
  flush_prose(s, out);
}

}  // namespace

void MarkdownStream::append(QStringView text) {
  // Only complete lines move the state; the last, unfinished line waits in partial_.
  qsizetype from = 0;
  for (qsizetype nl = text.indexOf(QLatin1Char('\n')); nl >= 0; nl = text.indexOf(QLatin1Char('\n'), from)) {
    partial_ += text.mid(from, nl - from);
    feed_line(state_, partial_, finished_);
    partial_.clear();
    from = nl + 1;
  }
  partial_ += text.mid(from);
}

std::vector<MarkdownBlock> MarkdownStream::open() const {
  // A copy of the open block's state only: the finished blocks are not touched.
  State s = state_;
  std::vector<MarkdownBlock> out;
  feed_line(s, partial_, out);
  flush_open(s, out);
  return out;
}

std::vector<MarkdownBlock> MarkdownStream::blocks() const {
  std::vector<MarkdownBlock> out = finished_;
  for (auto& b : open()) out.push_back(std::move(b));
  return out;
}

std::vector<MarkdownBlock> split_markdown(const QString& markdown) {
  MarkdownStream stream;
  stream.append(markdown);
  return stream.blocks();
}

}  // namespace hearth::app
