#include "app/code_highlighter.h"

#include <QSet>
#include <QStringList>

#include <array>

namespace hearth::app {

// One language: its words and how its comments and strings look.
struct CodeLanguage {
  QString name;
  QStringList aliases;  // lower case
  QSet<QString> keywords, types, constants;
  QStringList line_comments;        // "//", "#"
  QString block_open, block_close;  // "/*", "*/"; empty: none
  QString quotes;                   // single-line string delimiters
  QChar multiline_quote;            // a string that may span lines (JS template, Go raw); null: none
  bool triple_quotes = false;       // Python's """ and '''
  bool hash_lines = false;          // a line starting with '#': preprocessor (C/C++), attribute (Rust)
  QChar decorator;                  // '@name': decorator / annotation; null: none
  bool shell = false;               // $variables; '#' starts a comment only at a word's start
  bool json_keys = false;           // a string before ':' is a key
  bool macros = false;              // Rust: name! is a call
};

namespace {

// States carried between lines (kCodeStateNone: nothing open).
enum State : int { kInBlockComment = 1, kInTripleDouble = 2, kInTripleSingle = 3, kInMultiline = 4 };

QSet<QString> words(const char* list) {
  QSet<QString> out;
  for (const QString& w : QString::fromLatin1(list).split(QLatin1Char(' '), Qt::SkipEmptyParts)) out.insert(w);
  return out;
}

std::vector<CodeLanguage> make_languages() {
  std::vector<CodeLanguage> t;
  const QStringList slashes{QStringLiteral("//")};
  const QStringList hash{QStringLiteral("#")};
  CodeLanguage c;
  c.name = QStringLiteral("C/C++");
  c.aliases = {"c", "h", "cpp", "c++", "cxx", "cc", "hpp", "hxx", "hh", "cuda", "cu", "objc"};
  c.keywords = words(
      "alignas alignof asm auto break case catch class concept const consteval constexpr constinit const_cast "
      "continue co_await co_return co_yield decltype default delete do dynamic_cast else enum explicit export extern "
      "final for friend goto if inline mutable namespace new noexcept operator override private protected public "
      "register reinterpret_cast requires return sizeof static static_assert static_cast struct switch template this "
      "thread_local throw try typedef typeid typename union using virtual volatile while");
  c.types = words(
      "bool char char8_t char16_t char32_t double float int long short signed unsigned void wchar_t size_t ssize_t "
      "ptrdiff_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t std string vector map "
      "unique_ptr shared_ptr optional");
  c.constants = words("true false nullptr NULL");
  c.line_comments = slashes;
  c.block_open = QStringLiteral("/*");
  c.block_close = QStringLiteral("*/");
  c.quotes = QStringLiteral("\"'");
  c.hash_lines = true;
  t.push_back(c);

  CodeLanguage py;
  py.name = QStringLiteral("Python");
  py.aliases = {"python", "py", "python3", "py3", "pyi"};
  py.keywords = words(
      "and as assert async await break case class continue def del elif else except finally for from global if "
      "import in is lambda match nonlocal not or pass raise return try while with yield");
  py.types = words("int float str bool list dict set tuple bytes object type complex frozenset");
  py.constants = words("True False None self cls");
  py.line_comments = hash;
  py.quotes = QStringLiteral("\"'");
  py.triple_quotes = true;
  py.decorator = QLatin1Char('@');
  t.push_back(py);

  CodeLanguage js;
  js.name = QStringLiteral("JavaScript/TypeScript");
  js.aliases = {"javascript", "js", "jsx", "mjs", "cjs", "typescript", "ts", "tsx", "node"};
  js.keywords = words(
      "abstract as async await break case catch class const continue debugger declare default delete do else enum "
      "export extends finally for from function get if implements import in instanceof interface keyof let new of "
      "private protected public readonly return set static super switch this throw try type typeof var void while "
      "with yield");
  js.types = words("number string boolean any unknown never object symbol bigint Array Promise Map Set Record");
  js.constants = words("true false null undefined NaN Infinity");
  js.line_comments = slashes;
  js.block_open = QStringLiteral("/*");
  js.block_close = QStringLiteral("*/");
  js.quotes = QStringLiteral("\"'");
  js.multiline_quote = QLatin1Char('`');
  js.decorator = QLatin1Char('@');
  t.push_back(js);

  CodeLanguage rs;
  rs.name = QStringLiteral("Rust");
  rs.aliases = {"rust", "rs"};
  rs.keywords = words(
      "as async await break const continue crate dyn else enum extern fn for if impl in let loop match mod move mut "
      "pub ref return static struct super trait type unsafe use where while");
  rs.types = words(
      "i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64 bool char str String Vec Option Result Box Self");
  rs.constants = words("true false None Some Ok Err self");
  rs.line_comments = slashes;
  rs.block_open = QStringLiteral("/*");
  rs.block_close = QStringLiteral("*/");
  rs.quotes = QStringLiteral("\"");  // ' also starts lifetimes: char literals stay plain
  rs.hash_lines = true;              // #[derive(...)]
  rs.macros = true;
  t.push_back(rs);

  CodeLanguage go;
  go.name = QStringLiteral("Go");
  go.aliases = {"go", "golang"};
  go.keywords = words(
      "break case chan const continue default defer else fallthrough for func go goto if import interface map "
      "package range return select struct switch type var");
  go.types = words(
      "bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string uint uint8 "
      "uint16 uint32 uint64 uintptr any");
  go.constants = words("true false nil iota");
  go.line_comments = slashes;
  go.block_open = QStringLiteral("/*");
  go.block_close = QStringLiteral("*/");
  go.quotes = QStringLiteral("\"'");
  go.multiline_quote = QLatin1Char('`');
  t.push_back(go);

  CodeLanguage java;
  java.name = QStringLiteral("Java");
  java.aliases = {"java"};
  java.keywords = words(
      "abstract assert break case catch class const continue default do else enum extends final finally for goto if "
      "implements import instanceof interface native new package permits private protected public record return "
      "sealed static strictfp super switch synchronized this throw throws transient try var volatile while yield");
  java.types = words("boolean byte char double float int long short void String Object Integer List Map");
  java.constants = words("true false null");
  java.line_comments = slashes;
  java.block_open = QStringLiteral("/*");
  java.block_close = QStringLiteral("*/");
  java.quotes = QStringLiteral("\"'");
  java.decorator = QLatin1Char('@');
  t.push_back(java);

  CodeLanguage sh;
  sh.name = QStringLiteral("Shell");
  sh.aliases = {"sh", "bash", "shell", "zsh", "console", "shellscript"};
  sh.keywords = words(
      "if then else elif fi case esac for while until do done in function select return exit local export readonly "
      "declare set unset shift break continue source alias");
  sh.types = words("echo cd printf read test eval exec trap");
  sh.line_comments = hash;
  sh.quotes = QStringLiteral("\"'");
  sh.shell = true;
  t.push_back(sh);

  CodeLanguage json;
  json.name = QStringLiteral("JSON");
  json.aliases = {"json", "jsonc", "json5", "jsonl"};
  json.constants = words("true false null");
  json.quotes = QStringLiteral("\"");
  json.json_keys = true;
  t.push_back(json);
  return t;
}

const std::vector<CodeLanguage>& languages() {
  static const std::vector<CodeLanguage> table = make_languages();
  return table;
}

bool is_word_char(QChar c) {
  return c.isLetterOrNumber() || c == QLatin1Char('_');
}

// The end (one past) of the string opened at `open` with `quote`, or -1 when
// the line ends first. A backslash escapes the next character.
qsizetype string_end(QStringView line, qsizetype from, QStringView quote, bool escapes) {
  for (qsizetype i = from; i < line.size(); ++i) {
    if (escapes && line[i] == QLatin1Char('\\')) {
      ++i;
      continue;
    }
    if (line.mid(i).startsWith(quote)) return i + quote.size();
  }
  return -1;
}

QStringView closer_of(const CodeLanguage& l, int state) {
  static const QString triple_double = QStringLiteral("\"\"\""), triple_single = QStringLiteral("'''");
  switch (state) {
    case kInBlockComment:
      return l.block_close;
    case kInTripleDouble:
      return triple_double;
    case kInTripleSingle:
      return triple_single;
    default:
      return {};
  }
}

qsizetype number_end(QStringView line, qsizetype i) {
  const bool hex = line.mid(i).startsWith(QLatin1String("0x")) || line.mid(i).startsWith(QLatin1String("0X"));
  qsizetype j = i + 1;
  while (j < line.size()) {
    const QChar c = line[j];
    const bool exponent_sign = !hex && (c == QLatin1Char('+') || c == QLatin1Char('-')) &&
                               (line[j - 1] == QLatin1Char('e') || line[j - 1] == QLatin1Char('E'));
    if (!is_word_char(c) && c != QLatin1Char('.') && !exponent_sign) break;
    ++j;
  }
  return j;
}

qsizetype next_non_space(QStringView line, qsizetype i) {
  while (i < line.size() && line[i].isSpace()) ++i;
  return i;
}

}  // namespace

const CodeLanguage* code_language(QStringView info) {
  const QString word = info.trimmed().toString().section(QLatin1Char(' '), 0, 0).toLower();
  if (word.isEmpty()) return nullptr;
  for (const CodeLanguage& l : languages()) {
    if (l.aliases.contains(word)) return &l;
  }
  return nullptr;
}

QString code_language_name(const CodeLanguage& language) {
  return language.name;
}

std::vector<CodeSpan> highlight_code_line(const CodeLanguage& l, QStringView line, int& state) {
  std::vector<CodeSpan> out;
  const qsizetype n = line.size();
  auto add = [&out](qsizetype from, qsizetype to, CodeToken kind) {
    if (to > from) out.push_back({from, to - from, kind});
  };
  qsizetype i = 0;
  if (state != kCodeStateNone) {  // the construct the last line left open
    const bool comment = state == kInBlockComment;
    const QString multiline = QString(l.multiline_quote);
    const QStringView close = state == kInMultiline ? QStringView(multiline) : closer_of(l, state);
    const qsizetype end = close.isEmpty() ? n : string_end(line, 0, close, !comment);
    const CodeToken kind = comment ? CodeToken::kComment : CodeToken::kString;
    if (end < 0) {
      add(0, n, kind);
      return out;
    }
    add(0, end, kind);
    i = end;
    state = kCodeStateNone;
  } else if (l.hash_lines) {
    const qsizetype first = next_non_space(line, 0);
    if (first < n && line[first] == QLatin1Char('#')) {
      add(first, n, CodeToken::kPreprocessor);
      return out;
    }
  }
  while (i < n) {
    const QChar c = line[i];
    const QStringView rest = line.mid(i);
    if (c.isSpace()) {
      ++i;
      continue;
    }
    bool comment = false;
    for (const QString& start : l.line_comments) comment = comment || rest.startsWith(start);
    if (comment && l.shell && i > 0 && !line[i - 1].isSpace() && line[i - 1] != QLatin1Char(';')) comment = false;
    if (comment) {
      add(i, n, CodeToken::kComment);
      return out;
    }
    if (!l.block_open.isEmpty() && rest.startsWith(l.block_open)) {
      const qsizetype end = string_end(line, i + l.block_open.size(), l.block_close, false);
      if (end < 0) {
        add(i, n, CodeToken::kComment);
        state = kInBlockComment;
        return out;
      }
      add(i, end, CodeToken::kComment);
      i = end;
      continue;
    }
    if (l.triple_quotes && (rest.startsWith(QLatin1String("\"\"\"")) || rest.startsWith(QLatin1String("'''")))) {
      const qsizetype end = string_end(line, i + 3, rest.first(3), true);
      if (end < 0) {
        add(i, n, CodeToken::kString);
        state = c == QLatin1Char('"') ? kInTripleDouble : kInTripleSingle;
        return out;
      }
      add(i, end, CodeToken::kString);
      i = end;
      continue;
    }
    if (!l.multiline_quote.isNull() && c == l.multiline_quote) {
      const qsizetype end = string_end(line, i + 1, rest.first(1), true);
      if (end < 0) {
        add(i, n, CodeToken::kString);
        state = kInMultiline;
        return out;
      }
      add(i, end, CodeToken::kString);
      i = end;
      continue;
    }
    if (l.quotes.contains(c)) {
      const bool escapes = !(l.shell && c == QLatin1Char('\''));  // '...' in a shell is literal
      qsizetype end = string_end(line, i + 1, rest.first(1), escapes);
      if (end < 0) end = n;  // unterminated: to the end of the line
      const qsizetype after = next_non_space(line, end);
      const bool key = l.json_keys && after < n && line[after] == QLatin1Char(':');
      add(i, end, key ? CodeToken::kKey : CodeToken::kString);
      i = end;
      continue;
    }
    if (c.isDigit() || (c == QLatin1Char('.') && i + 1 < n && line[i + 1].isDigit())) {
      const qsizetype end = number_end(line, i);
      add(i, end, CodeToken::kNumber);
      i = end;
      continue;
    }
    if (c.isLetter() || c == QLatin1Char('_')) {
      qsizetype end = i + 1;
      while (end < n && is_word_char(line[end])) ++end;
      const QString word = line.mid(i, end - i).toString();
      const qsizetype after = next_non_space(line, end);
      if (l.keywords.contains(word)) {
        add(i, end, CodeToken::kKeyword);
      } else if (l.types.contains(word)) {
        add(i, end, CodeToken::kType);
      } else if (l.constants.contains(word)) {
        add(i, end, CodeToken::kConstant);
      } else if (l.macros && end < n && line[end] == QLatin1Char('!')) {
        add(i, end + 1, CodeToken::kFunction);
        ++end;
      } else if (!l.json_keys && after < n && line[after] == QLatin1Char('(')) {
        add(i, end, CodeToken::kFunction);
      }
      i = end;
      continue;
    }
    if (!l.decorator.isNull() && c == l.decorator && i + 1 < n &&
        (line[i + 1].isLetter() || line[i + 1] == QLatin1Char('_'))) {
      qsizetype end = i + 1;
      while (end < n && (is_word_char(line[end]) || line[end] == QLatin1Char('.'))) ++end;
      add(i, end, CodeToken::kPreprocessor);
      i = end;
      continue;
    }
    if (l.shell && c == QLatin1Char('$') && i + 1 < n) {
      qsizetype end = i + 1;
      if (line[end] == QLatin1Char('{')) {
        const qsizetype close = line.indexOf(QLatin1Char('}'), end);
        end = close < 0 ? n : close + 1;
      } else if (line[end].isLetter() || line[end] == QLatin1Char('_')) {
        while (end < n && is_word_char(line[end])) ++end;
      } else if (line[end].isDigit() || QStringLiteral("@#?$!*-").contains(line[end])) {
        ++end;
      }
      add(i, end > i + 1 ? end : i, CodeToken::kVariable);
      i = end > i + 1 ? end : i + 1;
      continue;
    }
    ++i;
  }
  return out;
}

QString code_token_color(CodeToken kind, bool dark) {
  // Light: on #f4f5f7; dark: on #17181a (theme.cpp's code background). Every
  // colour keeps a contrast of at least 4.5:1 there.
  static constexpr std::array<std::array<const char*, 2>, 10> colors{{
      {"#a626a4", "#c678dd"},  // keyword
      {"#986801", "#e5c07b"},  // type
      {"#b35900", "#d19a66"},  // constant
      {"#3c7a36", "#98c379"},  // string
      {"#b35900", "#d19a66"},  // number
      {"#6b7078", "#8b919a"},  // comment
      {"#2f62c6", "#61afef"},  // preprocessor
      {"#2f62c6", "#61afef"},  // function
      {"#c0392b", "#e06c75"},  // variable
      {"#c0392b", "#e06c75"},  // key
  }};
  return QString::fromLatin1(colors[static_cast<std::size_t>(kind)][dark ? 1 : 0]);
}

QString highlight_code_html(const CodeLanguage& language, QStringView code, int& state, bool dark) {
  QString html = QStringLiteral("<div style=\"white-space:pre-wrap\">");
  html.reserve(code.size() * 2 + 64);
  qsizetype line_start = 0;
  while (line_start <= code.size()) {
    qsizetype line_end = code.indexOf(QLatin1Char('\n'), line_start);
    if (line_end < 0) line_end = code.size();
    const QStringView line = code.mid(line_start, line_end - line_start);
    qsizetype at = 0;
    for (const CodeSpan& s : highlight_code_line(language, line, state)) {
      html += line.mid(at, s.start - at).toString().toHtmlEscaped();
      const bool italic = s.kind == CodeToken::kComment;
      html += QStringLiteral("<span style=\"color:%1%2\">")
                  .arg(code_token_color(s.kind, dark), italic ? QStringLiteral(";font-style:italic") : "");
      html += line.mid(s.start, s.length).toString().toHtmlEscaped();
      html += QStringLiteral("</span>");
      at = s.start + s.length;
    }
    html += line.mid(at).toString().toHtmlEscaped();
    if (line_end == code.size()) break;
    html += QStringLiteral("<br>");
    line_start = line_end + 1;
  }
  html += QStringLiteral("</div>");
  return html;
}

}  // namespace hearth::app
