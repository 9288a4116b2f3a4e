#include "app/markdown_blocks.h"

#include <QStringList>

namespace hearth::app {
namespace {

struct Fence {
  QChar ch;
  qsizetype length = 0;
  QString info;
};

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

void flush_text(std::vector<MarkdownBlock>& out, QStringList& lines) {
  const QString text = lines.join(QLatin1Char('\n'));
  lines.clear();
  if (text.trimmed().isEmpty()) return;
  out.push_back({MarkdownBlock::Kind::kText, text, {}, true});
}

}  // namespace

std::vector<MarkdownBlock> split_markdown(const QString& markdown) {
  std::vector<MarkdownBlock> out;
  QStringList prose;
  QStringList code;
  Fence open;
  bool in_code = false;
  for (const QString& line : markdown.split(QLatin1Char('\n'))) {
    Fence fence;
    if (!in_code && parse_fence(line, fence)) {
      flush_text(out, prose);
      open = fence;
      in_code = true;
      continue;
    }
    if (in_code && parse_fence(line, fence) && fence.ch == open.ch && fence.length >= open.length &&
        fence.info.isEmpty()) {
      out.push_back({MarkdownBlock::Kind::kCode, code.join(QLatin1Char('\n')), open.info, true});
      code.clear();
      in_code = false;
      continue;
    }
    (in_code ? code : prose).append(line);
  }
  if (in_code) out.push_back({MarkdownBlock::Kind::kCode, code.join(QLatin1Char('\n')), open.info, false});
  flush_text(out, prose);
  return out;
}

}  // namespace hearth::app
