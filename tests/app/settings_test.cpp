// The app's settings file (settings/settings.h) under the test's temporary
// XDG_CONFIG_HOME: its theme, context length and sampling defaults are applied
// at start; closing the window writes it back with the geometry and dock
// layout; a corrupt file or an out-of-range value gives a warning banner and
// the app still starts. Waits are QTRY_*.
#include <QApplication>
#include <QPalette>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <fstream>

#include "app/app_settings.h"
#include "app/banner.h"
#include "app/chat_controller.h"
#include "app/engine_bridge.h"
#include "app/main_window.h"
#include "settings/settings.h"
#include "store/store.h"
#include "test_env.h"

using namespace hearth::app;
namespace fs = std::filesystem;

namespace {

constexpr int kLoadTimeoutMs = 120000;
constexpr int kAnswerTimeoutMs = 120000;

fs::path corrupt_copy(const fs::path& path) {
  fs::path copy = path;
  copy += ".corrupt";
  return copy;
}

void write_text(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

}  // namespace

class SettingsTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    auto path = hearth::settings::default_settings_path();
    QVERIFY(path.ok());
    path_ = *path;
    const QString config = qEnvironmentVariable("XDG_CONFIG_HOME");
    QVERIFY(!config.isEmpty());
    QVERIFY2(QString::fromStdString(path_.string()).startsWith(config), path_.c_str());
  }

  void init() {
    std::error_code ec;
    fs::remove(path_, ec);
    fs::remove(corrupt_copy(path_), ec);
  }

  void appliesTheFileAndWritesItOnClose() {
    write_text(path_,
               "{\"version\": 1, \"theme\": \"dark\", \"context_length\": 1024,"
               " \"sampling\": {\"temperature\": 0, \"top_k\": 5, \"seed\": 1234},"
               " \"from_a_newer_hearth\": [1, 2]}");
    const QString db = dir_.filePath(QStringLiteral("applies.db"));
    qint64 answer = 0;
    {  // First start: load, answer once, resize, close.
      auto window = makeWindow(db, true);
      QVERIFY(window->banner()->isHidden());  // a valid file: no warning
      QCOMPARE(window->theme(), Theme::kDark);
      QVERIFY(qApp->palette().color(QPalette::Window).lightness() < 128);
      QCOMPARE(window->controller()->sampling().temperature, 0.0f);
      QCOMPARE(window->controller()->sampling().top_k, 5);
      // The engine was created with the file's context length (the model's default is 8192).
      QTRY_VERIFY_WITH_TIMEOUT(window->engine()->model().has_value(), kLoadTimeoutMs);
      QCOMPARE(window->engine()->model()->context_length, 1024);

      QSignalSpy finished(window->controller(), &ChatController::answerFinished);
      window->controller()->send(QStringLiteral("Say hello."));
      QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, kAnswerTimeoutMs);
      answer = finished.at(0).at(0).value<GenerationDone>().tag;
      window->resize(1111, 633);
      QTRY_COMPARE(window->size(), QSize(1111, 633));
      window->close();
    }
    // The answer's request used the file's sampling: its generation record says so.
    auto store = hearth::store::Store::open({.path = db.toStdString()});
    QVERIFY(store.ok());
    auto record = (*store)->get_generation(answer);
    QVERIFY(record.ok() && record->has_value());
    QCOMPARE((*record)->sampling.temperature, 0.0);
    QCOMPARE((*record)->sampling.top_k, std::int64_t{5});
    QCOMPARE((*record)->sampling.seed, std::uint64_t{1234});

    // Closing wrote the file: what was read, plus the window's state.
    auto saved = hearth::settings::load_settings(path_);
    QVERIFY(saved.ok());
    QVERIFY(saved->warnings.empty());
    const hearth::settings::Settings& s = saved->settings;
    QCOMPARE(s.theme, hearth::settings::Theme::kDark);
    QCOMPARE(s.context_length, 1024);
    QCOMPARE(s.sampling.temperature, 0.0f);
    QCOMPARE(s.sampling.seed, std::uint64_t{1234});
    QVERIFY(!blob_from_base64(s.window_geometry).isEmpty());
    QVERIFY(!blob_from_base64(s.panel_layout).isEmpty());
    QVERIFY(!s.last_model.empty() && fs::exists(s.last_model));
    QVERIFY(last_conversation(s) > 0);
    QCOMPARE(s.unknown_keys.count("from_a_newer_hearth"), std::size_t{1});

    // The next start restores the geometry from the file.
    auto window = makeWindow(db, false);
    QTRY_COMPARE(window->size(), QSize(1111, 633));
    QTRY_COMPARE(window->controller()->currentConversation(), last_conversation(s));
  }

  void corruptFileWarnsAndTheAppStarts() {
    write_text(path_, "{\"theme\": \"dark\", \"context_len");  // cut short
    auto window = makeWindow(dir_.filePath(QStringLiteral("corrupt.db")), false);
    QTRY_VERIFY(window->banner()->isVisible());
    QVERIFY2(window->banner()->text().startsWith(QStringLiteral("Settings:")), qPrintable(window->banner()->text()));
    QVERIFY2(window->banner()->text().contains(QStringLiteral("JSON")), qPrintable(window->banner()->text()));
    QVERIFY(fs::exists(corrupt_copy(path_)));   // what the user had is kept
    QCOMPARE(window->theme(), Theme::kSystem);  // the defaults
    QCOMPARE(window->controller()->sampling().temperature, hearth::SamplingParams{}.temperature);
    window->controller()->newConversation();  // still usable
    window->close();
    auto saved = hearth::settings::load_settings(path_);
    QVERIFY(saved.ok());
    QVERIFY(!saved->unreadable);
    QVERIFY(saved->warnings.empty());
  }

  void outOfRangeValueWarnsAndUsesTheDefault() {
    write_text(path_, "{\"version\": 1, \"context_length\": 5, \"theme\": \"light\"}");
    auto window = makeWindow(dir_.filePath(QStringLiteral("range.db")), false);
    QTRY_VERIFY(window->banner()->isVisible());
    QVERIFY2(window->banner()->text().contains(QStringLiteral("context_length")), qPrintable(window->banner()->text()));
    QCOMPARE(window->settings().values.context_length, hearth::settings::Settings{}.context_length);
    QCOMPARE(window->theme(), Theme::kLight);  // the valid values still apply
  }

 private:
  std::unique_ptr<MainWindow> makeWindow(const QString& db, bool load_model) {
    MainWindowOptions options;
    options.database_path = db;
    options.max_tokens = 8;
    options.load_model = load_model;
    auto window = std::make_unique<MainWindow>(options);
    window->show();
    return window;
  }

  QTemporaryDir dir_;
  fs::path path_;
};

HEARTH_APP_TEST_MAIN(SettingsTest)
#include "settings_test.moc"
