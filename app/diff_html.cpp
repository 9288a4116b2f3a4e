#include "app/diff_html.h"

#include <QStringList>

namespace hearth::app {
namespace {

// Escaped, with line breaks kept.
QString html_text(const std::string& text) {
  return QString::fromStdString(text).toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>"));
}

int words_in(const std::string& text) {
  return static_cast<int>(QString::fromStdString(text).split(QLatin1Char(' '), Qt::SkipEmptyParts).size());
}

}  // namespace

DiffHtml side_by_side_html(const std::vector<store::DiffOp>& ops) {
  DiffHtml out;
  const QString start = QStringLiteral("<div>");
  out.old_html = start;
  out.new_html = start;
  for (const store::DiffOp& op : ops) {
    const QString text = html_text(op.text);
    switch (op.op) {
      case store::DiffOpKind::kEqual:
        out.old_html += text;
        out.new_html += text;
        break;
      case store::DiffOpKind::kDelete:
        out.old_html += QStringLiteral("<span style=\"background-color:#f8c9c6; text-decoration: line-through;\">") +
                        text + QStringLiteral("</span>");
        out.deleted_words += words_in(op.text);
        break;
      case store::DiffOpKind::kInsert:
        out.new_html += QStringLiteral("<span style=\"background-color:#c6efce;\">") + text + QStringLiteral("</span>");
        out.inserted_words += words_in(op.text);
        break;
    }
  }
  out.old_html += QStringLiteral("</div>");
  out.new_html += QStringLiteral("</div>");
  return out;
}

}  // namespace hearth::app
