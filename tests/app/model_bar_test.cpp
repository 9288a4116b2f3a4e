// The model bar on the offscreen platform with the default model: a load that
// fails (a file that is not a GGUF, a truncated GGUF) keeps the loaded model,
// says why in the banner and the log dock, and drops the file from the list;
// the window title follows the real state (Unload clears it) and an old load
// error goes once a later load succeeds.
#include <QApplication>
#include <QComboBox>
#include <QFile>
#include <QListView>
#include <QPushButton>
#include <QTemporaryDir>
#include <QTest>

#include "app/banner.h"
#include "app/engine_bridge.h"
#include "app/main_window.h"
#include "app/model_bar.h"
#include "test_env.h"

using namespace hearth::app;

namespace {

constexpr int kLoadTimeoutMs = 120000;

bool log_mentions(MainWindow* window, const QString& text) {
  auto* view = window->findChild<QListView*>(QStringLiteral("logView"));
  for (int r = 0; view && r < view->model()->rowCount(); ++r) {
    if (view->model()->index(r, 0).data().toString().contains(text)) return true;
  }
  return false;
}

}  // namespace

class ModelBarTest : public QObject {
  Q_OBJECT

 private slots:
  void aFailedLoadKeepsTheModel() {
    QTemporaryDir dir;
    MainWindowOptions options;
    options.database_path = dir.filePath(QStringLiteral("hearth.db"));
    options.settings_path = dir.filePath(QStringLiteral("settings.json"));
    MainWindow window(options);
    window.show();
    QTRY_VERIFY_WITH_TIMEOUT(window.engine()->model().has_value(), kLoadTimeoutMs);
    const LoadedModel good = *window.engine()->model();
    QCOMPARE(window.windowTitle(), good.name + QStringLiteral(" \u2014 Hearth"));  // "Hearth" once
    auto* bar = window.findChild<ModelBar*>(QStringLiteral("modelBar"));
    auto* combo = window.findChild<QComboBox*>(QStringLiteral("modelCombo"));

    // Not a GGUF at all, then the first megabyte of a real one.
    const QString text_file = dir.filePath(QStringLiteral("notes.gguf"));
    QFile notes(text_file);
    QVERIFY(notes.open(QIODevice::WriteOnly));
    notes.write("these are not weights\n");
    notes.close();
    const QString truncated = dir.filePath(QStringLiteral("truncated.gguf"));
    QFile whole(good.path);
    QVERIFY(whole.open(QIODevice::ReadOnly));
    QFile part(truncated);
    QVERIFY(part.open(QIODevice::WriteOnly));
    part.write(whole.read(1 << 20));
    part.close();

    for (const QString& bad : {text_file, truncated}) {
      bar->selectPath(bad);
      QTest::mouseClick(window.findChild<QPushButton*>(QStringLiteral("loadButton")), Qt::LeftButton);
      QTRY_VERIFY_WITH_TIMEOUT(window.banner()->showingError(), kLoadTimeoutMs);
      const QString said = window.banner()->text();
      QVERIFY2(said.contains(bad) && said.contains(QStringLiteral("still loaded")), qPrintable(said));
      QTRY_VERIFY(!window.engine()->loading());
      QVERIFY(window.engine()->model().has_value());
      QCOMPARE(window.engine()->model()->path, good.path);  // the working model stays
      QCOMPARE(window.windowTitle(), good.name + QStringLiteral(" \u2014 Hearth"));
      QCOMPARE(combo->findData(bad), -1);  // only loadable models stay listed
      QCOMPARE(bar->selectedPath(), good.path);
      QTRY_VERIFY(log_mentions(&window, QStringLiteral("could not load ") + bad));
      QVERIFY(window.findChild<QPushButton*>(QStringLiteral("sendButton"))->isEnabled());
      window.banner()->hide();
    }

    // The old error goes once a load succeeds; Unload clears the title.
    bar->selectPath(text_file);
    QTest::mouseClick(window.findChild<QPushButton*>(QStringLiteral("loadButton")), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(window.banner()->showingError(), kLoadTimeoutMs);
    QTest::mouseClick(window.findChild<QPushButton*>(QStringLiteral("unloadButton")), Qt::LeftButton);
    QTRY_VERIFY(!window.engine()->model().has_value());
    QCOMPARE(window.windowTitle(), QStringLiteral("Hearth"));
    QVERIFY(!window.findChild<QPushButton*>(QStringLiteral("sendButton"))->isEnabled());
    bar->selectPath(good.path);
    QTest::mouseClick(window.findChild<QPushButton*>(QStringLiteral("loadButton")), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(window.engine()->model().has_value(), kLoadTimeoutMs);
    QTRY_VERIFY(!window.banner()->showingError());
    QCOMPARE(window.windowTitle(), good.name + QStringLiteral(" \u2014 Hearth"));
  }
};

HEARTH_APP_TEST_MAIN(ModelBarTest)
#include "model_bar_test.moc"
