// Syntax highlighting for the chat's code blocks: a small table-driven
// tokenizer (keywords, types, constants, strings, numbers, comments,
// preprocessor lines / decorators, calls, shell variables, JSON keys) for the
// common languages, chosen by the fence's info string: C/C++, Python,
// JavaScript/TypeScript, Rust, Go, Java, shell, JSON. KSyntaxHighlighting has
// no Qt 6 build in Debian 12; this covers what chat answers show, line by
// line, with a state carried across lines (an open block comment, a Python
// triple-quoted string, a JS/Go backtick string), so a code block can be
// highlighted in chunks as it streams.
#pragma once

#include <QString>
#include <QStringView>

#include <vector>

namespace hearth::app {

enum class CodeToken {
  kKeyword,
  kType,
  kConstant,
  kString,
  kNumber,
  kComment,
  kPreprocessor,
  kFunction,
  kVariable,
  kKey
};

struct CodeSpan {
  qsizetype start = 0;  // in the line, UTF-16 units
  qsizetype length = 0;
  CodeToken kind = CodeToken::kKeyword;
  bool operator==(const CodeSpan&) const = default;
};

struct CodeLanguage;  // one row of the table (code_highlighter.cpp)

// The language of a fence's info string ("cpp", "Python", "ts {.numberLines}"):
// its first word, case-insensitive, with the usual aliases. nullptr: not one
// of the table's (shown plain).
const CodeLanguage* code_language(QStringView info);
QString code_language_name(const CodeLanguage& language);  // "C++", "Python", ...

// Line state between calls: 0 outside anything that spans lines.
inline constexpr int kCodeStateNone = 0;

// The highlighted spans of one line (no newline in it), in order, not
// overlapping; text between them is plain. `state` is the state before the
// line on entry and after it on return.
std::vector<CodeSpan> highlight_code_line(const CodeLanguage& language, QStringView line, int& state);

// Colours of the token kinds for a light or dark background.
QString code_token_color(CodeToken kind, bool dark);

// Rich text for a QLabel: `code` (lines separated by '\n') escaped, spaces and
// line breaks kept, each span in its colour. `state` as above, across calls.
QString highlight_code_html(const CodeLanguage& language, QStringView code, int& state, bool dark);

}  // namespace hearth::app
