// What QLabel's own Markdown rendering draws badly: tables (cramped cells,
// a double border: the table's and each cell's, with spacing between) and
// block quotes (only an indent). A prose block holding either is rendered
// through a QTextDocument with those formats fixed, as rich text: tables
// with collapsed single borders, padded cells and a shaded header row;
// quotes indented, muted and tinted. Other prose keeps the plain path.
#pragma once

#include <QString>
#include <QStringView>

class QPalette;

namespace hearth::app {

bool needs_styled_markdown(QStringView markdown);  // a table row or a "> " line
QString styled_markdown_html(const QString& markdown, const QPalette& palette);

}  // namespace hearth::app
