// Keyboard and layout of the main window on the offscreen platform, with no
// model (none is needed): the first window's size, the window at 1024x640
// with every dock open, the focus staying in the input after a Copy in a
// message, the conversation search keys (Esc, Up / Down, Enter), and a
// conversation opened while a search hides it becoming visible.
#include <QApplication>
#include <QClipboard>
#include <QDockWidget>
#include <QLineEdit>
#include <QListView>
#include <QPlainTextEdit>
#include <QScreen>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

#include "app/app_settings.h"
#include "app/chat_controller.h"
#include "app/chat_model.h"
#include "app/chat_rows.h"
#include "app/conversation_list_model.h"
#include "app/main_window.h"
#include "app/message_widget.h"
#include "app/perf_dock.h"
#include "app/storage_service.h"
#include "test_env.h"

using namespace hearth::app;
namespace store = hearth::store;

class KeyboardLayoutTest : public QObject {
  Q_OBJECT

 private slots:
  void init() {
    dir_ = std::make_unique<QTemporaryDir>();
    makeWindow();
  }
  void makeWindow() {
    MainWindowOptions options;
    options.database_path = dir_->filePath(QStringLiteral("hearth.db"));
    options.settings_path = dir_->filePath(QStringLiteral("settings.json"));
    options.load_model = false;
    window_ = std::make_unique<MainWindow>(options);
    window_->show();
  }
  void cleanup() {
    window_.reset();
    dir_.reset();
  }

  void firstWindowAndSmallScreens() {
    // No saved geometry: about 70% of the screen (never below what the layout needs).
    const QSize screen = window_->screen()->availableGeometry().size();
    QVERIFY2(window_->width() >= screen.width() * 0.69 && window_->height() >= screen.height() * 0.69,
             qPrintable(QStringLiteral("%1x%2 on %3x%4")
                            .arg(window_->width())
                            .arg(window_->height())
                            .arg(screen.width())
                            .arg(screen.height())));
    // Every dock open (the right ones share a column, a tab each): 1024x640 still fits.
    for (QDockWidget* dock : window_->findChildren<QDockWidget*>()) dock->show();
    const QSize needed = window_->minimumSizeHint().expandedTo(window_->minimumSize());
    QVERIFY2(needed.width() <= 1024 && needed.height() <= 640,
             qPrintable(QStringLiteral("needs %1x%2").arg(needed.width()).arg(needed.height())));
    window_->resize(1024, 640);
    QTRY_COMPARE(window_->size(), QSize(1024, 640));
  }

  void focusStaysInTheInputAfterCopy() {
    ConversationPath path;
    path.conversation_id = 1;
    path.rows.resize(2);
    path.rows[0].message.id = 10;
    path.rows[0].message.role = store::Role::kUser;
    path.rows[0].message.content = "Show me code";
    path.rows[1].message.id = 11;
    path.rows[1].message.role = store::Role::kAssistant;
    path.rows[1].message.content = "Here:\n```cpp\nint x = 1;\n```\nDone.";
    window_->controller()->chatModel()->setPath(path);
    auto* input = window_->findChild<QPlainTextEdit*>(QStringLiteral("inputBox"));
    input->setFocus();
    QTRY_VERIFY(input->hasFocus());
    QTest::keyClicks(input, QStringLiteral("my draft"));
    QTRY_VERIFY(window_->findChild<MessageWidget*>(QStringLiteral("message_1")));
    auto* answer = window_->findChild<MessageWidget*>(QStringLiteral("message_1"));
    for (const char* name : {"copyCodeButton", "copyButton"}) {
      auto* copy = answer->findChild<QToolButton*>(QString::fromLatin1(name));
      QVERIFY(copy && copy->isVisible());
      QTest::mouseClick(copy, Qt::LeftButton);
      QVERIFY2(input->hasFocus(), name);
      QCOMPARE(QApplication::focusWidget(), input);
    }
    QCOMPARE(QApplication::clipboard()->text(), QString::fromStdString(path.rows[1].message.content));
    QTest::keyClicks(input, QStringLiteral(" more"));  // typing goes on in the box
    QCOMPARE(input->toPlainText(), QStringLiteral("my draft more"));
    for (QToolButton* b : answer->findChildren<QToolButton*>()) QCOMPARE(b->focusPolicy(), Qt::NoFocus);
  }

  void searchKeys() {
    const std::vector<store::Id> ids = makeConversations({"Zebras in winter", "Apples and pears", "Zebra stripes"});
    auto* c = window_->controller();
    auto* list = c->conversationModel();
    QTRY_COMPARE(list->rowCount(), 3);
    auto* search = window_->findChild<QLineEdit*>(QStringLiteral("searchField"));
    search->setFocus();
    QTest::keyClicks(search, QStringLiteral("zebra"));
    QTRY_VERIFY(list->showingSearch());
    QTRY_COMPARE(list->rowCount(), 2);
    // Esc clears the search.
    QTest::keyClick(search, Qt::Key_Escape);
    QVERIFY(search->text().isEmpty());
    QTRY_VERIFY(!list->showingSearch());
    QTRY_COMPARE(list->rowCount(), 3);
    // Enter opens the first result and hands the focus to the input.
    QTest::keyClicks(search, QStringLiteral("zebra"));
    QTest::keyClick(search, Qt::Key_Return);
    QTRY_VERIFY(list->showingSearch());
    const qint64 first = list->idAt(0);
    QTRY_COMPARE(c->currentConversation(), first);
    QTRY_VERIFY(window_->findChild<QPlainTextEdit*>(QStringLiteral("inputBox"))->hasFocus());
    // Down / Up move through the results (and open them).
    search->setFocus();
    QTest::keyClick(search, Qt::Key_Down);
    QTRY_COMPARE(c->currentConversation(), list->idAt(1));
    QTest::keyClick(search, Qt::Key_Up);
    QTRY_COMPARE(c->currentConversation(), first);
    // A conversation the search hides, opened now (as a new chat is on its first send), is listed.
    const store::Id apples = ids[1];
    c->openConversation(apples);
    QTRY_COMPARE(c->currentConversation(), apples);
    QTRY_VERIFY(!list->showingSearch());
    QTRY_VERIFY(list->rowOf(apples) >= 0);
    auto* view = window_->findChild<QListView*>(QStringLiteral("conversationList"));
    QTRY_COMPARE(view->currentIndex().row(), list->rowOf(apples));
  }

  // The window goes away without closing (as in a crash): the next start
  // reopens the conversation the user was in, not the one open at the last clean exit.
  void reopensTheConversationAfterACrash() {
    const std::vector<store::Id> ids = makeConversations({"First", "Second", "Third"});
    auto* c = window_->controller();
    c->openConversation(ids[0]);
    QTRY_COMPARE(c->currentConversation(), ids[0]);
    window_->close();  // a clean exit in the first conversation
    window_.reset();
    makeWindow();
    QTRY_COMPARE(window_->controller()->currentConversation(), ids[0]);
    window_->controller()->openConversation(ids[1]);
    QTRY_COMPARE(window_->controller()->currentConversation(), ids[1]);
    QTRY_COMPARE(window_->controller()->chatModel()->rowCount(), 1);
    QTRY_COMPARE(last_conversation(window_->settings().values), qint64{ids[1]});
    window_.reset();  // no close event: the crash
    makeWindow();
    QTRY_COMPARE(window_->controller()->currentConversation(), ids[1]);
  }

 private:
  std::vector<store::Id> makeConversations(const std::vector<std::string>& titles) {
    std::optional<std::vector<store::Id>> ids;
    window_->storage()->write(
        this, QStringLiteral("test conversations"),
        [titles](store::Store& s) -> store::StoreResult<std::vector<store::Id>> {
          std::vector<store::Id> out;
          for (const auto& t : titles) {
            STORE_ASSIGN_OR_RETURN(const store::Id id, s.create_conversation(t));
            STORE_TRY(s.add_message({id, std::nullopt, store::Role::kUser, t}));
            out.push_back(id);
          }
          return out;
        },
        [&ids](std::vector<store::Id> v) { ids = std::move(v); });
    [&] { QTRY_VERIFY(ids.has_value()); }();
    window_->controller()->reloadConversations();
    return ids.value_or(std::vector<store::Id>{});
  }

  std::unique_ptr<QTemporaryDir> dir_;
  std::unique_ptr<MainWindow> window_;
};

HEARTH_APP_TEST_MAIN(KeyboardLayoutTest)
#include "keyboard_layout_test.moc"
