// Qt-light pieces of the app: Markdown block splitting, percentiles, the
// batching sink and conversation titles. Exact expectations on tiny inputs.
#include <QApplication>
#include <QTest>

#include "app/batching_sink.h"
#include "app/chat_controller.h"
#include "app/markdown_blocks.h"
#include "test_env.h"

using hearth::app::MarkdownBlock;
using Kind = hearth::app::MarkdownBlock::Kind;

class MarkdownAndSinkTest : public QObject {
  Q_OBJECT

 private slots:
  void splitsProseAndCode() {
    const auto blocks = hearth::app::split_markdown(
        QStringLiteral("Here:\n```cpp\nint x = 1;\n```\nDone.\n~~~~\nraw ``` inside\n~~~~"));
    QCOMPARE(blocks.size(), std::size_t{4});
    QVERIFY(blocks[0] == (MarkdownBlock{Kind::kText, QStringLiteral("Here:"), {}, true}));
    QVERIFY(blocks[1] == (MarkdownBlock{Kind::kCode, QStringLiteral("int x = 1;"), QStringLiteral("cpp"), true}));
    QVERIFY(blocks[2] == (MarkdownBlock{Kind::kText, QStringLiteral("Done."), {}, true}));
    QVERIFY(blocks[3] == (MarkdownBlock{Kind::kCode, QStringLiteral("raw ``` inside"), {}, true}));
  }

  void openFenceRunsToTheEnd() {
    const auto blocks = hearth::app::split_markdown(QStringLiteral("a\n   ```py\nprint(1)\nprint(2)"));
    QCOMPARE(blocks.size(), std::size_t{2});
    QCOMPARE(blocks[1].text, QStringLiteral("print(1)\nprint(2)"));
    QCOMPARE(blocks[1].language, QStringLiteral("py"));
    QVERIFY(!blocks[1].closed);
  }

  void notFences() {
    // Two backticks, four spaces of indent, and a backtick fence whose info has a backtick.
    for (const char* text : {"``not a fence``", "    ```\nindented", "```a`b\nx"}) {
      const auto blocks = hearth::app::split_markdown(QString::fromLatin1(text));
      QCOMPARE(blocks.size(), std::size_t{1});
      QCOMPARE(blocks[0].kind, Kind::kText);
    }
    QVERIFY(hearth::app::split_markdown(QStringLiteral("\n \n")).empty());
  }

  void paragraphsSplitButListsStayWhole() {
    const auto blocks =
        hearth::app::split_markdown(QStringLiteral("One.\n\nTwo\nlines.\n\n1. a\n\n2. b\n   more\n\n- c\n\nEnd.\n\n"));
    QCOMPARE(blocks.size(), std::size_t{3});
    QCOMPARE(blocks[0].text, QStringLiteral("One."));
    // A loose list keeps its items (and the paragraph before it) in one block: numbering renders as written.
    QCOMPARE(blocks[1].text, QStringLiteral("Two\nlines.\n\n1. a\n\n2. b\n   more\n\n- c"));
    QCOMPARE(blocks[2].text, QStringLiteral("End."));
  }

  // Fed in pieces of any size, the stream ends with the blocks of the whole
  // text, and a block it called finished never changes afterwards.
  void streamingMatchesTheWholeText() {
    const QString text = QStringLiteral(
        "Intro paragraph\nwith two lines.\n\n```python\ndef f(x):\n    return x\n\n```\nAfter the code.\n\n"
        "- item\n- item two\n\n~~~\nunclosed ``` not a close\n~~~\n\nLast words, then a fence:\n```js\nlet a = 1;");
    const auto whole = hearth::app::split_markdown(text);
    QCOMPARE(whole.size(), std::size_t{6});
    QCOMPARE(whole.back().language, QStringLiteral("js"));
    QVERIFY(!whole.back().closed);
    for (qsizetype piece : {1, 2, 3, 7, 50}) {
      hearth::app::MarkdownStream stream;
      std::vector<MarkdownBlock> seen;
      for (qsizetype at = 0; at < text.size(); at += piece) {
        stream.append(QStringView(text).mid(at, piece));
        const auto& done = stream.finished();
        QVERIFY(done.size() >= seen.size());
        for (std::size_t i = 0; i < seen.size(); ++i) QVERIFY(done[i] == seen[i]);
        seen = done;
      }
      QVERIFY2(stream.blocks() == whole, qPrintable(QString::number(piece)));
    }
  }

  void percentileByNearestRank() {
    using hearth::app::percentile;
    QCOMPARE(percentile({}, 0.5), 0.0);
    QCOMPARE(percentile({7}, 0.95), 7.0);
    // Nearest rank over 1..10: p50 -> rank 5, p95 -> rank 10, p0 -> the smallest.
    const std::vector<double> v = {10, 3, 7, 1, 9, 2, 8, 4, 6, 5};
    QCOMPARE(percentile(v, 0.5), 5.0);
    QCOMPARE(percentile(v, 0.95), 10.0);
    QCOMPARE(percentile(v, 0.0), 1.0);
    QCOMPARE(percentile(v, 0.91), 10.0);
    QCOMPARE(percentile(v, 0.9), 9.0);
  }

  void sinkBatchesTextUntilTheFinish() {
    int wakes = 0;
    hearth::app::BatchingSink sink([&wakes] { ++wakes; });
    const auto t0 = hearth::Clock::now();
    using std::chrono::milliseconds;
    sink.on_text({1, "Hel", {10}, t0});
    sink.on_text({1, "lo", {11}, t0 + milliseconds(20)});
    auto first = sink.drain();
    QCOMPARE(first.text, std::string("Hello"));
    QCOMPARE(first.tokens, 2);
    QVERIFY(!first.finish);
    sink.on_text({1, " you", {12, 13, 14}, t0 + milliseconds(50)});
    hearth::FinishEvent fin;
    fin.id = 1;
    fin.reason = hearth::FinishReason::kLength;
    sink.on_finish(fin);
    QCOMPARE(wakes, 1);
    auto second = sink.drain();
    QCOMPARE(second.text, std::string(" you"));
    QCOMPARE(second.tokens, 3);
    QVERIFY(second.finish.has_value());
    QCOMPARE(second.finish->reason, hearth::FinishReason::kLength);
    auto third = sink.drain();
    QVERIFY(third.text.empty());
    QVERIFY(!third.finish);
  }

  void titles() {
    using hearth::app::title_from_message;
    QCOMPARE(title_from_message(QStringLiteral("  Hello   there \nsecond line")), QStringLiteral("Hello there"));
    QCOMPARE(title_from_message(QStringLiteral(" \n ")), QStringLiteral("New chat"));
    const QString long_text(60, QLatin1Char('a'));
    const QString title = title_from_message(long_text);
    QCOMPARE(title.size(), 48);
    QCOMPARE(title.back(), QChar(0x2026));
  }
};

HEARTH_APP_TEST_MAIN(MarkdownAndSinkTest)
#include "markdown_and_sink_test.moc"
