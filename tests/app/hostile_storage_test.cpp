// Nothing the user typed or saw is lost (issue 14): a second Hearth on the
// same database opens read-only and says so at start (before anything is
// typed), and a message the store cannot save goes back to the input box.
#include <QApplication>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "app/banner.h"
#include "app/chat_backend.h"
#include "app/chat_controller.h"
#include "app/main_window.h"
#include "app/storage_service.h"
#include "test_env.h"

using namespace hearth::app;

namespace {

// A backend with a model, so that send() reaches the store.
class FakeBackend final : public ChatBackend {
 public:
  FakeBackend() {
    LoadedModel m;
    m.path = QStringLiteral("/models/fake.gguf");
    m.name = QStringLiteral("Fake");
    model_ = m;
  }
  const std::optional<LoadedModel>& model() const override { return model_; }
  void generate(const GenerationRequest& request) override { requests.push_back(request); }
  void cancel(qint64) override {}
  std::vector<GenerationRequest> requests;

 private:
  std::optional<LoadedModel> model_;
};

}  // namespace

class HostileStorageTest : public QObject {
  Q_OBJECT

 private slots:
  void secondInstanceIsReadOnlyAndTypedTextComesBack() {
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("hearth.db"));
    StorageService first(db);
    QSignalSpy first_opened(&first, &StorageService::opened);
    QSignalSpy first_read_only(&first, &StorageService::readOnlyDatabase);
    QTRY_COMPARE(first_opened.count(), 1);

    StorageService second(db);
    QSignalSpy second_read_only(&second, &StorageService::readOnlyDatabase);
    QTRY_COMPARE(second_read_only.count(), 1);
    const QString reason = second_read_only.at(0).at(0).toString();
    QVERIFY2(reason.contains(QStringLiteral("Another Hearth")), qPrintable(reason));
    QVERIFY2(reason.contains(QString::number(QCoreApplication::applicationPid())), qPrintable(reason));
    QCOMPARE(first_read_only.count(), 0);

    // Sending through the read-only instance: the store refuses, the text comes back.
    FakeBackend backend;
    ChatController controller(&second, &backend);
    QSignalSpy unsent(&controller, &ChatController::unsentText);
    QSignalSpy errors(&controller, &ChatController::errorOccurred);
    const QString typed = QStringLiteral("A long question\nI typed with care.");
    controller.send(typed);
    QTRY_COMPARE(unsent.count(), 1);
    QCOMPARE(unsent.at(0).at(0).toString(), typed);
    QTRY_COMPARE(errors.count(), 1);
    QVERIFY(!controller.generating());
    QVERIFY(backend.requests.empty());
  }

  void mainWindowShowsTheBannerAtStartAndRestoresUnsentText() {
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("hearth.db"));
    StorageService holder(db);  // "another Hearth"
    QSignalSpy held(&holder, &StorageService::opened);
    QTRY_COMPARE(held.count(), 1);

    MainWindowOptions options;
    options.database_path = db;
    options.settings_path = dir.filePath(QStringLiteral("settings.json"));
    options.load_model = false;
    options.restore_state = false;
    MainWindow window(options);
    window.show();
    QTRY_VERIFY(window.banner()->isVisible());
    QVERIFY2(window.banner()->text().contains(QStringLiteral("read-only")), qPrintable(window.banner()->text()));

    auto* input = window.findChild<QPlainTextEdit*>(QStringLiteral("inputBox"));
    QVERIFY(input);
    QTest::keyClicks(input, QStringLiteral("typed since"));
    emit window.controller()->unsentText(QStringLiteral("the refused message"));
    QCOMPARE(input->toPlainText(), QStringLiteral("the refused message\ntyped since"));
  }
};

HEARTH_APP_TEST_MAIN(HostileStorageTest)
#include "hostile_storage_test.moc"
