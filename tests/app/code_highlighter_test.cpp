// The code blocks' tokenizer, table-driven: for each language a line and the
// spans it must give (text and kind), states carried across lines (block
// comments, triple-quoted and backtick strings), the fence aliases, and the
// HTML a chunk becomes (escaped, one colour per span).
#include <QTest>

#include <utility>
#include <vector>

#include "app/code_highlighter.h"

using hearth::app::CodeSpan;
using hearth::app::CodeToken;

namespace {

using Expected = std::vector<std::pair<QString, CodeToken>>;

// The spans of `line` as (text, kind), for a readable comparison.
Expected spans_of(const char* language, const QString& line, int& state) {
  const auto* l = hearth::app::code_language(QString::fromLatin1(language));
  Expected out;
  if (!l) return out;
  for (const CodeSpan& s : hearth::app::highlight_code_line(*l, line, state)) {
    out.emplace_back(line.mid(s.start, s.length), s.kind);
  }
  return out;
}

QString describe(const Expected& e) {
  QStringList parts;
  for (const auto& [text, kind] : e) parts << QStringLiteral("%1:%2").arg(text).arg(static_cast<int>(kind));
  return parts.join(QStringLiteral(" | "));
}

}  // namespace

class CodeHighlighterTest : public QObject {
  Q_OBJECT

 private slots:
  void languagesByFenceInfo() {
    for (const char* alias : {"cpp", "C++", "c", "hpp", "python", "py", "js", "ts", "tsx", "rust", "rs", "go", "java",
                              "bash", "sh", "shell", "json", "cpp {.numberLines}"}) {
      QVERIFY2(hearth::app::code_language(QString::fromLatin1(alias)) != nullptr, alias);
    }
    QCOMPARE(hearth::app::code_language(u"typescript"), hearth::app::code_language(u"javascript"));
    QVERIFY(hearth::app::code_language(u"") == nullptr);
    QVERIFY(hearth::app::code_language(u"brainfuck") == nullptr);
    QCOMPARE(hearth::app::code_language_name(*hearth::app::code_language(u"py")), QStringLiteral("Python"));
  }

  void oneLinePerLanguage_data() {
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("line");
    QTest::addColumn<Expected>("expected");
    using K = CodeToken;
    QTest::newRow("cpp") << QStringLiteral("cpp")
                         << QStringLiteral("static int f(const char* s) { return s == nullptr ? 0x1F : 2.5e-3; }")
                         << Expected{{QStringLiteral("static"), K::kKeyword},   {QStringLiteral("int"), K::kType},
                                     {QStringLiteral("f"), K::kFunction},       {QStringLiteral("const"), K::kKeyword},
                                     {QStringLiteral("char"), K::kType},        {QStringLiteral("return"), K::kKeyword},
                                     {QStringLiteral("nullptr"), K::kConstant}, {QStringLiteral("0x1F"), K::kNumber},
                                     {QStringLiteral("2.5e-3"), K::kNumber}};
    QTest::newRow("cpp include") << QStringLiteral("cpp") << QStringLiteral("  #include <vector> // x")
                                 << Expected{{QStringLiteral("#include <vector> // x"), K::kPreprocessor}};
    QTest::newRow("cpp comment after code")
        << QStringLiteral("c") << QStringLiteral("x = \"a \\\" // b\"; // done")
        << Expected{{QStringLiteral("\"a \\\" // b\""), K::kString}, {QStringLiteral("// done"), K::kComment}};
    QTest::newRow("cpp block comment closed")
        << QStringLiteral("cpp") << QStringLiteral("a /* b */ return")
        << Expected{{QStringLiteral("/* b */"), K::kComment}, {QStringLiteral("return"), K::kKeyword}};
    QTest::newRow("python def") << QStringLiteral("py") << QStringLiteral("def area(r: float) -> float:  # pi r^2")
                                << Expected{{QStringLiteral("def"), K::kKeyword},
                                            {QStringLiteral("area"), K::kFunction},
                                            {QStringLiteral("float"), K::kType},
                                            {QStringLiteral("float"), K::kType},
                                            {QStringLiteral("# pi r^2"), K::kComment}};
    QTest::newRow("python decorator") << QStringLiteral("py") << QStringLiteral("@functools.cache")
                                      << Expected{{QStringLiteral("@functools.cache"), K::kPreprocessor}};
    QTest::newRow("python strings") << QStringLiteral("py") << QStringLiteral("print(f'{x}', \"\"\"doc\"\"\", None)")
                                    << Expected{{QStringLiteral("print"), K::kFunction},
                                                {QStringLiteral("'{x}'"), K::kString},
                                                {QStringLiteral("\"\"\"doc\"\"\""), K::kString},
                                                {QStringLiteral("None"), K::kConstant}};
    QTest::newRow("js") << QStringLiteral("js") << QStringLiteral("const s = `hi ${name}`; let n = null;")
                        << Expected{{QStringLiteral("const"), K::kKeyword},
                                    {QStringLiteral("`hi ${name}`"), K::kString},
                                    {QStringLiteral("let"), K::kKeyword},
                                    {QStringLiteral("null"), K::kConstant}};
    QTest::newRow("ts") << QStringLiteral("ts") << QStringLiteral("function add(a: number): number { return a + 1; }")
                        << Expected{{QStringLiteral("function"), K::kKeyword}, {QStringLiteral("add"), K::kFunction},
                                    {QStringLiteral("number"), K::kType},      {QStringLiteral("number"), K::kType},
                                    {QStringLiteral("return"), K::kKeyword},   {QStringLiteral("1"), K::kNumber}};
    QTest::newRow("rust") << QStringLiteral("rust")
                          << QStringLiteral("let mut v: Vec<u8> = vec![1, 2]; println!(\"{}\", v.len());")
                          << Expected{
                                 {QStringLiteral("let"), K::kKeyword},   {QStringLiteral("mut"), K::kKeyword},
                                 {QStringLiteral("Vec"), K::kType},      {QStringLiteral("u8"), K::kType},
                                 {QStringLiteral("vec!"), K::kFunction}, {QStringLiteral("1"), K::kNumber},
                                 {QStringLiteral("2"), K::kNumber},      {QStringLiteral("println!"), K::kFunction},
                                 {QStringLiteral("\"{}\""), K::kString}, {QStringLiteral("len"), K::kFunction}};
    QTest::newRow("rust attribute") << QStringLiteral("rs") << QStringLiteral("#[derive(Debug)]")
                                    << Expected{{QStringLiteral("#[derive(Debug)]"), K::kPreprocessor}};
    QTest::newRow("rust lifetime") << QStringLiteral("rs") << QStringLiteral("fn f<'a>(x: &'a str)")
                                   << Expected{{QStringLiteral("fn"), K::kKeyword}, {QStringLiteral("str"), K::kType}};
    QTest::newRow("go") << QStringLiteral("go") << QStringLiteral("func main() { fmt.Println(`raw`, nil, 42) }")
                        << Expected{{QStringLiteral("func"), K::kKeyword},     {QStringLiteral("main"), K::kFunction},
                                    {QStringLiteral("Println"), K::kFunction}, {QStringLiteral("`raw`"), K::kString},
                                    {QStringLiteral("nil"), K::kConstant},     {QStringLiteral("42"), K::kNumber}};
    QTest::newRow("java") << QStringLiteral("java")
                          << QStringLiteral("@Override public String toString() { return \"x\"; }")
                          << Expected{{QStringLiteral("@Override"), K::kPreprocessor},
                                      {QStringLiteral("public"), K::kKeyword},
                                      {QStringLiteral("String"), K::kType},
                                      {QStringLiteral("toString"), K::kFunction},
                                      {QStringLiteral("return"), K::kKeyword},
                                      {QStringLiteral("\"x\""), K::kString}};
    QTest::newRow("shell") << QStringLiteral("bash")
                           << QStringLiteral("for f in *.txt; do echo \"$f\" ${HOME} $1; done # loop")
                           << Expected{
                                  {QStringLiteral("for"), K::kKeyword},   {QStringLiteral("in"), K::kKeyword},
                                  {QStringLiteral("do"), K::kKeyword},    {QStringLiteral("echo"), K::kType},
                                  {QStringLiteral("\"$f\""), K::kString}, {QStringLiteral("${HOME}"), K::kVariable},
                                  {QStringLiteral("$1"), K::kVariable},   {QStringLiteral("done"), K::kKeyword},
                                  {QStringLiteral("# loop"), K::kComment}};
    QTest::newRow("shell hash inside a word") << QStringLiteral("sh") << QStringLiteral("echo a#b 'it''s'")
                                              << Expected{{QStringLiteral("echo"), K::kType},
                                                          {QStringLiteral("'it'"), K::kString},
                                                          {QStringLiteral("'s'"), K::kString}};
    QTest::newRow("json") << QStringLiteral("json")
                          << QStringLiteral("{\"name\": \"Ada\", \"n\" : -1.5e3, \"ok\": true, \"x\": null}")
                          << Expected{{QStringLiteral("\"name\""), K::kKey}, {QStringLiteral("\"Ada\""), K::kString},
                                      {QStringLiteral("\"n\""), K::kKey},    {QStringLiteral("1.5e3"), K::kNumber},
                                      {QStringLiteral("\"ok\""), K::kKey},   {QStringLiteral("true"), K::kConstant},
                                      {QStringLiteral("\"x\""), K::kKey},    {QStringLiteral("null"), K::kConstant}};
    QTest::newRow("unterminated string") << QStringLiteral("cpp") << QStringLiteral("s = \"open")
                                         << Expected{{QStringLiteral("\"open"), K::kString}};
    QTest::newRow("empty") << QStringLiteral("go") << QStringLiteral("") << Expected{};
  }

  void oneLinePerLanguage() {
    QFETCH(QString, language);
    QFETCH(QString, line);
    QFETCH(Expected, expected);
    int state = hearth::app::kCodeStateNone;
    const Expected got = spans_of(language.toLatin1().constData(), line, state);
    QVERIFY2(got == expected, qPrintable(QStringLiteral("got %1\nwant %2").arg(describe(got), describe(expected))));
    QCOMPARE(state, hearth::app::kCodeStateNone);
  }

  // Constructs that span lines carry their state to the next line and end there.
  void statesAcrossLines() {
    using K = CodeToken;
    int state = hearth::app::kCodeStateNone;
    QVERIFY((spans_of("cpp", QStringLiteral("int a; /* start"), state) ==
             Expected{{QStringLiteral("int"), K::kType}, {QStringLiteral("/* start"), K::kComment}}));
    QVERIFY(state != hearth::app::kCodeStateNone);
    QVERIFY((spans_of("cpp", QStringLiteral("#not a directive here"), state) ==
             Expected{{QStringLiteral("#not a directive here"), K::kComment}}));
    QVERIFY(
        (spans_of("cpp", QStringLiteral("end */ return 1;"), state) == Expected{{QStringLiteral("end */"), K::kComment},
                                                                                {QStringLiteral("return"), K::kKeyword},
                                                                                {QStringLiteral("1"), K::kNumber}}));
    QCOMPARE(state, hearth::app::kCodeStateNone);

    QVERIFY((spans_of("python", QStringLiteral("s = '''first"), state) ==
             Expected{{QStringLiteral("'''first"), K::kString}}));
    QVERIFY((spans_of("python", QStringLiteral("has \"\"\" inside"), state) ==
             Expected{{QStringLiteral("has \"\"\" inside"), K::kString}}));  // the other triple quote does not close it
    QVERIFY((spans_of("python", QStringLiteral("last''' if x"), state) ==
             Expected{{QStringLiteral("last'''"), K::kString}, {QStringLiteral("if"), K::kKeyword}}));
    QCOMPARE(state, hearth::app::kCodeStateNone);

    QVERIFY((spans_of("js", QStringLiteral("const t = `a"), state) ==
             Expected{{QStringLiteral("const"), K::kKeyword}, {QStringLiteral("`a"), K::kString}}));
    QVERIFY((spans_of("js", QStringLiteral("b` + 1"), state) ==
             Expected{{QStringLiteral("b`"), K::kString}, {QStringLiteral("1"), K::kNumber}}));
    QCOMPARE(state, hearth::app::kCodeStateNone);
  }

  void htmlIsEscapedAndColoured() {
    const auto* cpp = hearth::app::code_language(u"cpp");
    int state = hearth::app::kCodeStateNone;
    const QString html = hearth::app::highlight_code_html(*cpp, u"if (a<b && c) {\n  return \"<x>\";\n}", state, false);
    QVERIFY2(html.contains(QStringLiteral("a&lt;b &amp;&amp; c")), qPrintable(html));
    QVERIFY2(html.contains(QStringLiteral("&quot;&lt;x&gt;&quot;")), qPrintable(html));
    QVERIFY(html.contains(QStringLiteral("<span style=\"color:%1\">if</span>")
                              .arg(hearth::app::code_token_color(CodeToken::kKeyword, false))));
    QCOMPARE(html.count(QStringLiteral("<br>")), 2);
    QVERIFY(html.contains(QStringLiteral("white-space:pre-wrap")));
    // Each kind has its own colour in each theme (numbers and constants may share one).
    for (bool dark : {false, true}) {
      QVERIFY(hearth::app::code_token_color(CodeToken::kKeyword, dark) !=
              hearth::app::code_token_color(CodeToken::kString, dark));
      QVERIFY(hearth::app::code_token_color(CodeToken::kComment, dark) !=
              hearth::app::code_token_color(CodeToken::kType, dark));
    }
  }
};

QTEST_GUILESS_MAIN(CodeHighlighterTest)
#include "code_highlighter_test.moc"
