// The marks of a rating, wherever the app shows one (answers, the history,
// a prompt version's metrics). Geometric shapes rather than the thumbs emoji:
// DejaVu Sans, which every Debian desktop has, draws them; a machine without a
// colour emoji font (fonts-noto-color-emoji) draws the emoji as empty boxes.
#pragma once

#include <QString>

namespace hearth::app {

inline QString rated_up_mark() {
  return QStringLiteral("\u25B2");  // ▲
}
inline QString rated_down_mark() {
  return QStringLiteral("\u25BC");  // ▼
}

}  // namespace hearth::app
