// The profiler panel live in the main window (issue 19), on the offscreen
// platform with synthetic models: View > Profiler opens it (profiling on),
// it fills while an answer streams (heat map, step timeline, breakdown), a
// clicked cell shows its history, freeze holds the views while the data keeps
// coming, the measures and the export (trace, CSV, JSON) work, closing the
// panel stops profiling and reopening starts a fresh window; the overflow
// check from the settings reports a boosted layer in the panel, the banner
// and the log; a latency target the answers keep missing brings a suggestion
// that, accepted, reloads the model with the lighter setting. Waits are QTRY_*.
#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <fstream>
#include <memory>

#include "app/banner.h"
#include "app/chat_controller.h"
#include "app/engine_bridge.h"
#include "app/latency_advisor.h"
#include "app/log_model.h"
#include "app/main_window.h"
#include "app/profiler_charts.h"
#include "app/profiler_dock.h"
#include "app/profiler_heatmap.h"
#include "models/synthetic.h"
#include "settings/settings.h"
#include "test_env.h"

using namespace hearth::app;
namespace models = hearth::models;

namespace {

constexpr int kTimeoutMs = 60000;

template <class T>
T* child(QObject* root, const char* name) {
  T* w = root->findChild<T*>(QString::fromLatin1(name));
  if (!w) qWarning("no child named %s", name);
  return w;
}

}  // namespace

class ProfilerPanelTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    // 3 layers, vocab 16000: the end-of-turn token is rarely drawn, so an answer streams for a while.
    models::SyntheticSpec spec;
    spec.shape = {"custom", 256, 3, 4, 2, 512, 16000, 4096, 10000.0f, 1e-5f, false};
    spec.quant = models::parse_synthetic_quant("Q8_0").value();
    model_ = dir_.filePath(QStringLiteral("tiny.gguf"));
    QVERIFY(models::write_synthetic_model(spec, model_.toStdString()).ok());
    spec.quant = models::parse_synthetic_quant("F32").value();
    spec.boosted_layer = 1;  // its outputs leave the FP16 range
    spec.boost = 1000.0f;
    boosted_ = dir_.filePath(QStringLiteral("boosted.gguf"));
    QVERIFY(models::write_synthetic_model(spec, boosted_.toStdString()).ok());
  }

  void fillsWhileAGenerationRuns() {
    auto window = makeWindow(model_, false);
    QTRY_VERIFY_WITH_TIMEOUT(window->engine()->model().has_value(), kTimeoutMs);
    ProfilerDock* dock = window->profilerDock();
    QVERIFY(dock != nullptr && dock->isHidden() && !dock->profilingActive());
    QAction* view = dock->toggleViewAction();
    view->trigger();  // View > Profiler
    QTRY_VERIFY(dock->isVisible());
    QVERIFY(dock->profilingActive());
    auto* map = child<ProfilerHeatMap>(dock, "profilerHeatMap");
    QCOMPARE(map->rows(), 0);

    send(window.get(), QStringLiteral("Tell me a long story."));
    QTRY_VERIFY_WITH_TIMEOUT(window->controller()->generating(), kTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(map->rows() == 3 && map->microseconds(2, 1) > 0 && map->microseconds(0, 4) > 0,
                             kTimeoutMs);
    QVERIFY(window->controller()->generating());  // filled during the answer, not after it
    auto* timeline = child<StepTimeline>(dock, "profilerTimeline");
    QVERIFY(timeline->stepCount() > 0);
    QVERIFY(child<QLabel>(dock, "profilerBreakdown")->text().contains(QStringLiteral("sampling")));
    QVERIFY(dock->data().report().ceilings.bytes_per_s > 0);  // measured when profiling started

    // Click layer 1's matmul: its history, one point per step, grows as steps arrive.
    QTest::mouseClick(map, Qt::LeftButton, {}, map->cellRect(1, 1).center());
    QCOMPARE(map->selectedRow(), 1);
    auto* history = child<CellHistoryChart>(dock, "profilerCellHistory");
    QVERIFY(history->title().contains(QStringLiteral("layer 1, matmul")));
    const std::size_t points = history->series().size();
    QVERIFY(points > 0);
    QTRY_VERIFY_WITH_TIMEOUT(history->series().size() > points || !window->controller()->generating(), kTimeoutMs);
    child<QPushButton>(window.get(), "stopButton")->click();
    QTRY_VERIFY_WITH_TIMEOUT(!window->controller()->generating(), kTimeoutMs);
    for (double us : history->series()) QVERIFY(us >= 0);

    // Freeze: the views hold while a new answer's steps keep arriving.
    child<QCheckBox>(dock, "profilerFreeze")->setChecked(true);
    const double shown = map->microseconds(1, 1);
    const std::int64_t steps = dock->data().report().steps;
    send(window.get(), QStringLiteral("Again."));
    QTRY_VERIFY_WITH_TIMEOUT(dock->data().report().steps > steps, kTimeoutMs);
    QCOMPARE(map->microseconds(1, 1), shown);
    child<QPushButton>(window.get(), "stopButton")->click();
    QTRY_VERIFY_WITH_TIMEOUT(!window->controller()->generating(), kTimeoutMs);
    child<QCheckBox>(dock, "profilerFreeze")->setChecked(false);
    QVERIFY(map->microseconds(1, 1) > shown);

    // The measures: the share of the step is a fraction of the forward; the ceiling fraction is positive.
    auto* measure = child<QComboBox>(dock, "profilerMeasure");
    measure->setCurrentIndex(1);
    double shares = 0;
    for (int r = 0; r < map->rows(); ++r) {
      for (int c = 0; c < map->columns(); ++c) shares += map->value(r, c);
    }
    QVERIFY2(shares > 0.3 && shares <= 1.0, qPrintable(QString::number(shares)));  // the layers are most of it
    measure->setCurrentIndex(2);
    QVERIFY(map->value(1, 1) > 0);
    QVERIFY(map->cellText(1, 1).contains(QStringLiteral("of the bandwidth ceiling")));
    measure->setCurrentIndex(0);

    // Export: a trace of complete events, the matrix as CSV (a line per cell) and as JSON.
    const QString trace = dir_.filePath(QStringLiteral("trace.json"));
    QVERIFY(dock->exportTo(ProfilerDock::ExportFormat::kTrace, trace));
    const QJsonArray events = readJson(trace).object().value(QStringLiteral("traceEvents")).toArray();
    int complete = 0;
    for (const auto& e : events) complete += e.toObject().value(QStringLiteral("ph")).toString() == "X" ? 1 : 0;
    QVERIFY(complete > 10);
    const QString csv = dir_.filePath(QStringLiteral("matrix.csv"));
    QVERIFY(dock->exportTo(ProfilerDock::ExportFormat::kCsv, csv));
    QFile csv_file(csv);
    QVERIFY(csv_file.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = csv_file.readAll().trimmed().split('\n');
    QCOMPARE(lines.size(), 1 + 3 * 9);
    QVERIFY(lines[0].startsWith("layer,kernel,duration_us"));
    const QString json = dir_.filePath(QStringLiteral("matrix.json"));
    QVERIFY(dock->exportTo(ProfilerDock::ExportFormat::kJson, json));
    const QJsonObject matrix = readJson(json).object();
    QCOMPARE(matrix.value(QStringLiteral("matrix_us")).toArray().size(), 3);
    QVERIFY(matrix.value(QStringLiteral("ceilings")).toObject().value(QStringLiteral("bytes_per_s")).toDouble() > 0);
    QString error;
    QVERIFY(
        !dock->exportTo(ProfilerDock::ExportFormat::kCsv, dir_.filePath(QStringLiteral("no/such/dir.csv")), &error));
    QVERIFY(!error.isEmpty());

    // Closing the panel stops profiling; reopening starts a fresh window: the
    // engine's next window number, and none of the old window's steps kept
    // (however many steps the new answer has run by the first update).
    view->trigger();
    QTRY_VERIFY(!dock->profilingActive());
    const std::uint64_t old_window = dock->data().report().window;
    QVERIFY(old_window > 0);
    QVERIFY(dock->data().report().steps > 0);
    view->trigger();
    QTRY_VERIFY(dock->profilingActive());
    // A new conversation: the random model's replies re-tokenize to many more
    // tokens than it generated, and this one's history may exceed the context.
    window->controller()->newConversation();
    send(window.get(), QStringLiteral("Once more."));
    const auto fresh = [&] {
      const hearth::ProfileReport& r = dock->data().report();
      return r.window > old_window && r.steps > 0;
    };
    QTRY_VERIFY2_WITH_TIMEOUT(fresh(),
                              qPrintable(QStringLiteral("window %1 (%2 before closing), %3 steps, generating: %4")
                                             .arg(dock->data().report().window)
                                             .arg(old_window)
                                             .arg(dock->data().report().steps)
                                             .arg(window->controller()->generating()) +
                                         window->banner()->text()),
                              kTimeoutMs);
    QVERIFY(!dock->data().steps().empty());
    QVERIFY(static_cast<std::int64_t>(dock->data().steps().size()) <= dock->data().report().steps);
    child<QPushButton>(window.get(), "stopButton")->click();
    QTRY_VERIFY_WITH_TIMEOUT(!window->controller()->generating(), kTimeoutMs);
  }

  void overflowCheckFromTheSettings() {
    auto window = makeWindow(boosted_, true);
    QTRY_VERIFY_WITH_TIMEOUT(window->engine()->model().has_value(), kTimeoutMs);
    ProfilerDock* dock = window->profilerDock();
    QVERIFY(child<QCheckBox>(dock, "profilerOverflowCheck")->isChecked());  // the settings' debug option
    send(window.get(), QStringLiteral("hello"));
    QTRY_VERIFY_WITH_TIMEOUT(window->banner()->text().contains(QStringLiteral("Overflow check")), kTimeoutMs);
    QVERIFY2(window->banner()->text().contains(QStringLiteral("layer 1")), qPrintable(window->banner()->text()));
    QVERIFY(child<QLabel>(dock, "profilerOverflow")->text().contains(QStringLiteral("layer 1")));
    auto* log = window->findChild<LogModel*>();
    QVERIFY(log != nullptr);
    const auto logged = [log] {
      for (int i = 0; i < log->rowCount(); ++i) {
        if (log->index(i).data().toString().contains(QStringLiteral("overflow check: "))) return true;
      }
      return false;
    };
    QTRY_VERIFY(logged());
    child<QPushButton>(window.get(), "stopButton")->click();
    QTRY_VERIFY_WITH_TIMEOUT(!window->controller()->generating(), kTimeoutMs);
    // Unticking it saves the setting.
    child<QCheckBox>(dock, "profilerOverflowCheck")->setChecked(false);
    QVERIFY(!window->settings().values.check_overflow);
    const auto saved = hearth::settings::from_json_text(readText(settings_path_));
    QVERIFY(!saved.settings.check_overflow);
  }

  // An ITL target no CPU meets: after kMinAnswers answers the advice offers
  // the lighter weights (the greatest expected gain); Apply reloads with them.
  void latencyAdviceSuggestsAndApplies() {
    auto window = makeWindow(model_, false, 0.001);
    QTRY_VERIFY_WITH_TIMEOUT(window->engine()->model().has_value(), kTimeoutMs);
    QCOMPARE(window->engine()->model()->quantization, QStringLiteral("Q8_0"));
    QCOMPARE(child<QComboBox>(window->profilerDock(), "latencyMetric")->currentIndex(), 0);
    QSignalSpy answers(window->controller(), &ChatController::answerFinished);
    for (std::size_t i = 0; i < LatencyAdvisor::kMinAnswers; ++i) {
      QVERIFY(!window->banner()->text().contains(QStringLiteral("Suggested")));  // not before the window is full
      send(window.get(), QStringLiteral("Answer %1").arg(i));
      QTRY_COMPARE_WITH_TIMEOUT(answers.count(), static_cast<int>(i) + 1, kTimeoutMs);
    }
    QTRY_VERIFY(window->banner()->text().contains(QStringLiteral("Suggested")));
    const QString text = window->banner()->text();
    QVERIFY2(text.contains(QStringLiteral("Q8_0 \u2192 Q6_K")) && text.contains(QStringLiteral("above your target")),
             qPrintable(text));
    const hearth::advice::Advice& a = window->latencyAdvisor()->lastAdvice();
    QVERIFY(a.verdict == hearth::advice::Advice::Verdict::kOverTarget);
    QVERIFY(a.measured_ms > 0.001);
    QVERIFY(text.contains(QString::number(a.measured_ms, 'f', 1)));              // the measured number, as shown
    QVERIFY(window->engine()->model()->quantization == QStringLiteral("Q8_0"));  // nothing changed on its own
    auto* apply = child<QPushButton>(window->banner(), "bannerAction");
    QCOMPARE(apply->text(), QStringLiteral("Apply"));
    apply->click();
    QTRY_VERIFY_WITH_TIMEOUT(window->engine()->model() && !window->engine()->loading() &&
                                 window->engine()->model()->quantization == QStringLiteral("Q6_K"),
                             kTimeoutMs);
  }

 private:
  std::unique_ptr<MainWindow> makeWindow(const QString& model, bool check_overflow, double latency_target_ms = 0) {
    hearth::settings::Settings s;
    s.device = "cpu";
    s.context_length = 4096;
    s.check_overflow = check_overflow;
    s.latency_target_ms = latency_target_ms;
    settings_path_ = dir_.filePath(QStringLiteral("settings-%1.json").arg(++windows_));
    std::ofstream(settings_path_.toStdString()) << hearth::settings::to_json_text(s);
    MainWindowOptions options;
    options.model = model;
    options.database_path = dir_.filePath(QStringLiteral("hearth-%1.db").arg(windows_));
    options.settings_path = settings_path_;
    options.restore_state = false;
    options.max_tokens = latency_target_ms > 0 ? 8 : 3000;
    auto window = std::make_unique<MainWindow>(options);
    window->resize(1024, 640);
    window->show();
    return window;
  }

  static void send(MainWindow* window, const QString& text) {
    auto* input = child<QPlainTextEdit>(window, "inputBox");
    input->setPlainText(text);
    QTRY_VERIFY(child<QPushButton>(window, "sendButton")->isEnabled());
    child<QPushButton>(window, "sendButton")->click();
  }

  static QJsonDocument readJson(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll());
  }
  static std::string readText(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll().toStdString() : std::string();
  }

  QTemporaryDir dir_;
  QString model_, boosted_, settings_path_;
  int windows_ = 0;
};

HEARTH_APP_TEST_MAIN(ProfilerPanelTest)
#include "profiler_panel_test.moc"
