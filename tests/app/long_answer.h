// A long, Markdown-shaped answer as a stream of token pieces, for the
// streaming test and benchmark: paragraphs, headings, lists and fenced code
// blocks in a fixed pseudo-random mix (the same pieces on every run). A piece
// is what the engine's detokeniser hands out: a word or part of one, a
// newline, a fence.
#pragma once

#include <QString>
#include <QStringList>

#include <cstdint>
#include <vector>

namespace hearth::app::testing {

inline std::vector<QString> long_answer_tokens(int count) {
  static const QStringList words = {
      QStringLiteral(" the"),    QStringLiteral(" dragon"), QStringLiteral(" cooks"),   QStringLiteral(" a"),
      QStringLiteral(" slow"),   QStringLiteral(" stew"),   QStringLiteral(" of"),      QStringLiteral(" river"),
      QStringLiteral(" stones"), QStringLiteral(","),       QStringLiteral(" and"),     QStringLiteral(" **salt**"),
      QStringLiteral(" while"),  QStringLiteral(" the"),    QStringLiteral(" village"), QStringLiteral(" waits"),
      QStringLiteral("."),       QStringLiteral(" Every"),  QStringLiteral(" recipe"),  QStringLiteral(" takes"),
      QStringLiteral(" `time`"), QStringLiteral(" to"),     QStringLiteral(" learn"),   QStringLiteral(".")};
  static const QStringList code = {QStringLiteral("    for"), QStringLiteral(" (int"), QStringLiteral(" i"),
                                   QStringLiteral(" ="),      QStringLiteral(" 0;"),   QStringLiteral(" i"),
                                   QStringLiteral(" <"),      QStringLiteral(" n;"),   QStringLiteral(" ++i)"),
                                   QStringLiteral(" sum"),    QStringLiteral(" +="),   QStringLiteral(" x[i];")};
  std::uint32_t state = 12345;
  auto next = [&state](qsizetype n) {
    state = state * 1664525u + 1013904223u;
    return (state >> 8) % static_cast<std::uint32_t>(n);
  };
  std::vector<QString> out;
  out.reserve(static_cast<std::size_t>(count) + 64);
  int section = 0;
  while (static_cast<int>(out.size()) < count) {
    const std::uint32_t kind = next(6);
    if (kind == 0) {  // a heading
      out.push_back(QStringLiteral("### Part %1\n\n").arg(++section));
    } else if (kind == 1) {  // a list
      for (std::uint32_t item = 0, n = 3 + next(4); item < n; ++item) {
        out.push_back(QStringLiteral("- "));
        for (std::uint32_t w = 0, len = 4 + next(8); w < len; ++w) out.push_back(words[next(words.size())]);
        out.push_back(QStringLiteral("\n"));
      }
      out.push_back(QStringLiteral("\n"));
    } else if (kind == 2) {  // a code block
      out.push_back(QStringLiteral("```cpp\n"));
      for (std::uint32_t line = 0, n = 8 + next(24); line < n; ++line) {
        for (std::uint32_t w = 0, len = 3 + next(8); w < len; ++w) out.push_back(code[next(code.size())]);
        out.push_back(QStringLiteral("\n"));
      }
      out.push_back(QStringLiteral("```\n\n"));
    } else {  // a paragraph (its first word without the space)
      out.push_back(QStringLiteral("Then"));
      for (std::uint32_t w = 0, len = 30 + next(60); w < len; ++w) out.push_back(words[next(words.size())]);
      out.push_back(QStringLiteral("\n\n"));
    }
  }
  out.resize(static_cast<std::size_t>(count));
  return out;
}

}  // namespace hearth::app::testing
