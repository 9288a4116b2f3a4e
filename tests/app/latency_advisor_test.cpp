// LatencyAdvisor (app/latency_advisor.h) on synthetic answer series: no
// advice without a target or below it, none for a passing spike, one offer
// (with the measured numbers and the expected gain) when the target stays
// missed, and a new model or target starts a fresh window.
#include <QSignalSpy>
#include <QTest>

#include <QList>

#include "app/latency_advisor.h"

using namespace hearth::app;
namespace advice = hearth::advice;

namespace {

GenerationDone answer(double itl_p99_ms, double ttft_ms = 100) {
  GenerationDone d;
  d.reason = hearth::FinishReason::kStop;
  d.usage.generated_tokens = 32;
  d.usage.itl_p99_ms = itl_p99_ms;
  d.usage.ttft_ms = ttft_ms;
  return d;
}

LoadedModel cpu_model() {
  LoadedModel m;
  m.quantization = QStringLiteral("Q8_0");
  m.kv_precision = QStringLiteral("f16");
  m.device = QStringLiteral("cpu");
  m.context_length = 4096;
  return m;
}

}  // namespace

class LatencyAdvisorTest : public QObject {
  Q_OBJECT

 private slots:
  void series_data() {
    QTest::addColumn<double>("target");
    QTest::addColumn<QList<double>>("itl");
    QTest::addColumn<int>("offers");
    QTest::addColumn<int>("verdict");
    using V = advice::Advice::Verdict;
    QTest::newRow("no target") << 0.0 << QList<double>(8, 50.0) << 0 << static_cast<int>(V::kNotEnoughData);
    QTest::newRow("too few answers") << 20.0 << QList<double>(3, 50.0) << 0 << static_cast<int>(V::kNotEnoughData);
    QTest::newRow("below the target") << 20.0 << QList<double>(8, 15.0) << 0 << static_cast<int>(V::kMeetsTarget);
    QTest::newRow("a passing spike") << 20.0 << QList<double>{50, 10, 10, 10, 10, 10, 10, 10} << 0
                                     << static_cast<int>(V::kTransient);
    QTest::newRow("missed for good, offered once")
        << 20.0 << QList<double>(10, 30.0) << 1 << static_cast<int>(V::kOverTarget);
  }

  void series() {
    QFETCH(double, target);
    QFETCH(QList<double>, itl);
    QFETCH(int, offers);
    QFETCH(int, verdict);
    LatencyAdvisor advisor;
    advisor.setModel(cpu_model());
    advisor.setTarget(advice::LatencyMetric::kInterTokenP99, target);
    QSignalSpy spy(&advisor, &LatencyAdvisor::suggestionReady);
    for (double ms : itl) advisor.addAnswer(answer(ms));
    QCOMPARE(spy.count(), offers);
    QCOMPARE(static_cast<int>(advisor.lastAdvice().verdict), verdict);
    if (offers == 0) return;
    const auto s = spy.at(0).at(0).value<advice::Suggestion>();
    QCOMPARE(QString::fromStdString(s.change), QStringLiteral("weight_format"));  // the biggest gain on the CPU
    QCOMPARE(QString::fromStdString(s.to), QStringLiteral("Q6_K"));
    const QString text = spy.at(0).at(1).toString();
    QVERIFY2(text.contains(QStringLiteral("30.0 ms")) && text.contains(QStringLiteral("target of 20.0 ms")),
             qPrintable(text));
    QVERIFY2(
        text.contains(QString::number(s.predicted_ms, 'f', 1)) && text.contains(QString::number(s.gain_ms, 'f', 1)),
        qPrintable(text));
  }

  void freshWindowAndTtft() {
    LatencyAdvisor advisor;
    advisor.setModel(cpu_model());
    advisor.setTarget(advice::LatencyMetric::kTtftP99, 200);
    QSignalSpy spy(&advisor, &LatencyAdvisor::suggestionReady);
    for (int i = 0; i < 6; ++i) advisor.addAnswer(answer(1, 500));
    QCOMPARE(spy.count(), 1);
    QVERIFY(spy.at(0).at(1).toString().startsWith(QStringLiteral("Time to first token p99 is 500.0 ms")));
    advisor.setModel(cpu_model());  // a reload (the suggestion applied): a fresh window
    QCOMPARE(advisor.samples(), std::size_t{0});
    for (int i = 0; i < 6; ++i) advisor.addAnswer(answer(1, 500));
    QCOMPARE(spy.count(), 2);
    GenerationDone failed = answer(1, 500);
    failed.reason = hearth::FinishReason::kError;
    advisor.addAnswer(failed);  // errors are not measurements
    QCOMPARE(advisor.samples(), std::size_t{6});
  }
};

QTEST_GUILESS_MAIN(LatencyAdvisorTest)
#include "latency_advisor_test.moc"
