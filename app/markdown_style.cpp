#include "app/markdown_style.h"

#include <QPalette>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextFrame>
#include <QTextTable>

namespace hearth::app {
namespace {

QColor mix(const QColor& a, const QColor& b, double t) {
  return QColor::fromRgbF(static_cast<float>(a.redF() * (1 - t) + b.redF() * t),
                          static_cast<float>(a.greenF() * (1 - t) + b.greenF() * t),
                          static_cast<float>(a.blueF() * (1 - t) + b.blueF() * t));
}

void style_table(QTextTable* table, const QPalette& palette) {
  QTextTableFormat f = table->format();
  f.setBorderCollapse(true);  // one line between cells, not the table's and each cell's
  f.setBorder(1);
  f.setBorderStyle(QTextFrameFormat::BorderStyle_Solid);
  f.setBorderBrush(mix(palette.color(QPalette::Base), palette.color(QPalette::Text), 0.3));
  f.setCellSpacing(0);
  f.setCellPadding(5);
  table->setFormat(f);
  const QColor header = mix(palette.color(QPalette::Base), palette.color(QPalette::Text), 0.08);
  for (int c = 0; c < table->columns(); ++c) {
    QTextTableCell cell = table->cellAt(0, c);
    QTextCharFormat format = cell.format();
    format.setBackground(header);
    cell.setFormat(format);
  }
}

void style_tables(QTextFrame* frame, const QPalette& palette) {
  for (QTextFrame* child : frame->childFrames()) {
    if (auto* table = qobject_cast<QTextTable*>(child)) style_table(table, palette);
    style_tables(child, palette);
  }
}

void style_quotes(QTextDocument& doc, const QPalette& palette) {
  const QColor muted = mix(palette.color(QPalette::Text), palette.color(QPalette::Base), 0.35);
  const QColor tint = mix(palette.color(QPalette::Base), palette.color(QPalette::Highlight), 0.10);
  for (QTextBlock b = doc.begin(); b.isValid(); b = b.next()) {
    const int level = b.blockFormat().intProperty(QTextFormat::BlockQuoteLevel);
    if (level <= 0) continue;
    QTextCursor cursor(b);
    QTextBlockFormat format = b.blockFormat();
    format.setLeftMargin(14.0 * level);
    format.setIndent(0);
    format.setBackground(tint);
    format.setTopMargin(2);
    format.setBottomMargin(2);
    cursor.setBlockFormat(format);
    cursor.select(QTextCursor::BlockUnderCursor);
    QTextCharFormat text;
    text.setForeground(muted);
    cursor.mergeCharFormat(text);
  }
}

}  // namespace

bool needs_styled_markdown(QStringView markdown) {
  for (const QStringView line : markdown.split(QLatin1Char('\n'))) {
    const QStringView t = line.trimmed();
    if (t.startsWith(QLatin1Char('>'))) return true;
    if (t.startsWith(QLatin1Char('|')) && t.size() > 1) return true;
  }
  return false;
}

QString styled_markdown_html(const QString& markdown, const QPalette& palette) {
  QTextDocument doc;
  doc.setMarkdown(markdown);
  style_tables(doc.rootFrame(), palette);
  style_quotes(doc, palette);
  return doc.toHtml();
}

}  // namespace hearth::app
