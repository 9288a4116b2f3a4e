// The whole app on the offscreen platform with the default model: load, send,
// watch the answer stream in and its stats line appear, regenerate, page
// through the versions, edit a message, search, then restart and find the
// conversation again. Widgets are found by objectName; waits are QTRY_*.
#include <QApplication>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

#include "app/banner.h"
#include "app/chat_controller.h"
#include "app/chat_model.h"
#include "app/conversation_list_model.h"
#include "app/engine_bridge.h"
#include "app/main_window.h"
#include "app/message_widget.h"
#include "app/stats_history_model.h"
#include "models/catalog.h"
#include "settings/settings.h"
#include "test_env.h"

using namespace hearth::app;

namespace {

constexpr int kLoadTimeoutMs = 120000;
constexpr int kAnswerTimeoutMs = 120000;

template <class T>
T* child(QObject* root, const char* name) {
  T* w = root->findChild<T*>(QString::fromLatin1(name));
  if (!w) qWarning("no child named %s", name);
  return w;
}

}  // namespace

class MainWindowTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { db_ = dir_.filePath(QStringLiteral("hearth.db")); }

  void chatsBranchesSearchesAndRestarts() {
    qint64 conversation = 0;
    {
      auto window = makeWindow();
      auto* c = window->controller();
      // The icon comes from the compiled-in resources (resources/hearth.qrc), in every size the qrc lists.
      QCOMPARE(window->windowIcon().availableSizes().size(), 7);
      QCOMPARE(window->windowIcon().pixmap(48, 48).size(), QSize(48, 48));
      // The default model is installed by the test command: loading it must work.
      QTRY_VERIFY_WITH_TIMEOUT(window->engine()->model().has_value(), kLoadTimeoutMs);
      // No settings file: the first start chose the context for this machine (models/recommend.h); the bar shows it.
      const QString context = QLocale().toString(window->engine()->model()->context_length);
      QVERIFY(window->engine()->model()->context_length >= 2048);
      QVERIFY(child<QLabel>(window.get(), "contextLabel")->text().endsWith(QStringLiteral("/ ") + context));

      sendAndWatchStream(window.get());
      conversation = c->currentConversation();
      QVERIFY(conversation > 0);
      QCOMPARE(c->conversationModel()->idAt(0), conversation);
      QVERIFY(!child<QLabel>(window.get(), "contextLabel")->text().startsWith(QStringLiteral("Context 0 ")));

      // Regenerate: a second version of the answer, with its own stats line.
      const qint64 first_answer = c->chatModel()->index(1).data(ChatModel::kIdRole).toLongLong();
      QTest::mouseClick(child<QPushButton>(window.get(), "regenerateButton"), Qt::LeftButton);
      QTRY_VERIFY(c->generating());
      QTRY_VERIFY_WITH_TIMEOUT(!c->generating(), kAnswerTimeoutMs);
      QCOMPARE(c->chatModel()->index(1).data(ChatModel::kSiblingCountRole).toInt(), 2);
      QCOMPARE(c->chatModel()->index(1).data(ChatModel::kSiblingIndexRole).toInt(), 2);
      const qint64 second_answer = c->chatModel()->index(1).data(ChatModel::kIdRole).toLongLong();
      QVERIFY(second_answer != first_answer);
      QTRY_VERIFY(statsLabel(window.get(), 1)->isVisible());

      // Branch navigation: "< 2/2" back to 1/2 shows the first answer.
      auto* answer = child<MessageWidget>(window.get(), "message_1");
      QCOMPARE(answer->findChild<QLabel*>(QStringLiteral("branchLabel"))->text(), QStringLiteral("2/2"));
      QTest::mouseClick(answer->findChild<QToolButton*>(QStringLiteral("prevBranch")), Qt::LeftButton);
      QTRY_COMPARE(c->chatModel()->index(1).data(ChatModel::kIdRole).toLongLong(), first_answer);
      answer = child<MessageWidget>(window.get(), "message_1");
      QTRY_COMPARE(answer->findChild<QLabel*>(QStringLiteral("branchLabel"))->text(), QStringLiteral("1/2"));
      QVERIFY(!answer->findChild<QToolButton*>(QStringLiteral("prevBranch"))->isEnabled());

      editFirstMessage(window.get());

      // Full-text search finds the conversation by a word of the edited message.
      auto* search = child<QLineEdit>(window.get(), "searchField");
      QTest::keyClicks(search, QStringLiteral("zebras"));
      QTRY_VERIFY(c->conversationModel()->showingSearch());
      QTRY_COMPARE(c->conversationModel()->rowCount(), 1);
      QCOMPARE(c->conversationModel()->idAt(0), conversation);
      search->clear();
      QTRY_VERIFY(!c->conversationModel()->showingSearch());
      window->close();  // saves the window state and the open conversation
    }
    // Restart: the conversation is listed and reopened with both branches.
    auto window = makeWindow();
    auto* c = window->controller();
    QTRY_VERIFY(c->conversationModel()->rowOf(conversation) >= 0);
    QTRY_COMPARE(c->currentConversation(), conversation);
    QTRY_COMPARE(c->chatModel()->rowCount(), 2);
    QCOMPARE(c->chatModel()->index(0).data(ChatModel::kSiblingCountRole).toInt(), 2);
    QVERIFY(c->chatModel()->index(0).data(ChatModel::kTextRole).toString().contains(QStringLiteral("zebras")));
    QTRY_VERIFY(!statsLabel(window.get(), 1)->text().isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(window->engine()->model().has_value(), kLoadTimeoutMs);  // the last model again
    QTRY_VERIFY(window->history()->rowCount() > 0);  // stats samples arrive while idle too
  }

  // A new user with no model yet (a fresh package install): the banner says how to get the default one.
  void missingDefaultModelSaysHowToInstallIt() {
    QTemporaryDir empty;
    const QByteArray saved = qgetenv("HEARTH_MODELS_DIR");
    qputenv("HEARTH_MODELS_DIR", empty.path().toUtf8());
    MainWindowOptions options;
    options.database_path = dir_.filePath(QStringLiteral("fresh.db"));
    options.settings_path = dir_.filePath(QStringLiteral("fresh-settings.json"));
    auto window = std::make_unique<MainWindow>(options);
    window->show();
    QTRY_VERIFY_WITH_TIMEOUT(window->banner()->isVisible(), kLoadTimeoutMs);
    const QString text = window->banner()->text();
    const QString name = QString::fromStdString(hearth::models::builtin_catalog().default_name);
    QVERIFY2(text.contains(QStringLiteral("is not installed")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("hearth-fetch-model ") + name), qPrintable(text));
    window.reset();
    qputenv("HEARTH_MODELS_DIR", saved);
  }

 private:
  std::unique_ptr<MainWindow> makeWindow() {
    MainWindowOptions options;
    options.database_path = db_;
    options.max_tokens = 16;  // keeps the test fast
    auto window = std::make_unique<MainWindow>(options);
    window->resize(1100, 750);
    window->show();
    return window;
  }

  QLabel* statsLabel(MainWindow* window, int row) {
    auto* message = child<MessageWidget>(window, QStringLiteral("message_%1").arg(row).toLatin1().constData());
    return message ? message->findChild<QLabel*>(QStringLiteral("statsLabel")) : nullptr;
  }

  void sendAndWatchStream(MainWindow* window) {
    auto* c = window->controller();
    auto* input = child<QPlainTextEdit>(window, "inputBox");
    QTest::keyClicks(input, QStringLiteral("Write a short poem"));
    QTest::keyClick(input, Qt::Key_Return, Qt::ShiftModifier);  // a new line, not a send
    QTest::keyClicks(input, QStringLiteral("about the sea."));
    QCOMPARE(input->toPlainText(), QStringLiteral("Write a short poem\nabout the sea."));
    QSignalSpy text_updates(c->chatModel(), &QAbstractItemModel::dataChanged);
    QSignalSpy finished(c, &ChatController::answerFinished);
    QTest::keyClick(input, Qt::Key_Return);
    QVERIFY(input->toPlainText().isEmpty());
    QTRY_COMPARE(c->chatModel()->rowCount(), 2);
    QCOMPARE(c->chatModel()->index(0).data(ChatModel::kTextRole).toString(),
             QStringLiteral("Write a short poem\nabout the sea."));
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, kAnswerTimeoutMs);
    // Tokens arrived as text updates before the final one, and the text is there.
    QVERIFY2(text_updates.count() >= 2, qPrintable(QString::number(text_updates.count())));
    const auto done = finished.at(0).at(0).value<GenerationDone>();
    QVERIFY(done.usage.generated_tokens > 0 && done.usage.generated_tokens <= 16);
    QVERIFY(!c->chatModel()->index(1).data(ChatModel::kTextRole).toString().isEmpty());
    QTRY_VERIFY(statsLabel(window, 1) && statsLabel(window, 1)->isVisible());
    const QString stats = statsLabel(window, 1)->text();
    QVERIFY2(stats.contains(QStringLiteral("%1 tokens").arg(done.usage.generated_tokens)) &&
                 stats.contains(QStringLiteral("TTFT")) && stats.contains(QStringLiteral("tok/s")),
             qPrintable(stats));
  }

  void editFirstMessage(MainWindow* window) {
    auto* c = window->controller();
    auto* question = child<MessageWidget>(window, "message_0");
    QTest::mouseClick(question->findChild<QToolButton*>(QStringLiteral("editButton")), Qt::LeftButton);
    auto* editor = question->findChild<QPlainTextEdit*>(QStringLiteral("editText"));
    QVERIFY(editor);
    editor->setPlainText(QStringLiteral("Write a short poem about zebras."));
    QTest::mouseClick(question->findChild<QPushButton*>(QStringLiteral("saveEditButton")), Qt::LeftButton);
    QTRY_VERIFY(c->generating());
    QTRY_VERIFY_WITH_TIMEOUT(!c->generating(), kAnswerTimeoutMs);
    QCOMPARE(c->chatModel()->index(0).data(ChatModel::kSiblingIndexRole).toInt(), 2);
    QCOMPARE(c->chatModel()->index(0).data(ChatModel::kSiblingCountRole).toInt(), 2);
    QCOMPARE(c->chatModel()->index(1).data(ChatModel::kSiblingCountRole).toInt(), 1);  // a fresh answer
    QTRY_COMPARE(child<MessageWidget>(window, "message_0")->findChild<QLabel*>(QStringLiteral("branchLabel"))->text(),
                 QStringLiteral("2/2"));
  }

  QTemporaryDir dir_;
  QString db_;
};

HEARTH_APP_TEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
