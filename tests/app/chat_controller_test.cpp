// ChatController over a real store in a temporary folder, without a model:
// opening a conversation, switching branches, search, rename, delete and
// undo; and a clear error (not a crash) when asked to send with no model.
#include <QApplication>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "app/chat_controller.h"
#include "app/chat_model.h"
#include "app/conversation_list_model.h"
#include "app/engine_bridge.h"
#include "app/storage_service.h"
#include "test_env.h"

using namespace hearth::app;
namespace store = hearth::store;

namespace {

struct Seeded {
  store::Id conversation = 0;
  store::Id user = 0;
  store::Id first_answer = 0;
  store::Id second_answer = 0;
};

// One question with two answers (the second a regeneration, now current).
store::StoreResult<Seeded> seed(store::Store& s) {
  Seeded out;
  STORE_ASSIGN_OR_RETURN(out.conversation, s.create_conversation("Borrowing in Rust"));
  STORE_ASSIGN_OR_RETURN(out.user, s.add_message({out.conversation, std::nullopt, store::Role::kUser,
                                                  "What does the borrow checker do?"}));
  STORE_ASSIGN_OR_RETURN(out.first_answer, s.begin_answer(out.conversation, out.user));
  STORE_TRY(s.finish_message(out.first_answer, {"It checks references.", store::MessageState::kComplete, {}}));
  STORE_ASSIGN_OR_RETURN(out.second_answer, s.regenerate(out.first_answer));
  STORE_TRY(s.finish_message(out.second_answer, {"It enforces aliasing rules.", store::MessageState::kComplete, {}}));
  STORE_TRY(s.create_conversation("Another chat"));
  return out;
}

}  // namespace

class ChatControllerTest : public QObject {
  Q_OBJECT

 private slots:
  void init() {
    dir_ = std::make_unique<QTemporaryDir>();
    storage_ = std::make_unique<StorageService>(dir_->filePath(QStringLiteral("test.db")));
    engine_ = std::make_unique<EngineBridge>();
    controller_ = std::make_unique<ChatController>(storage_.get(), engine_.get());
    bool done = false;
    storage_->write(controller_.get(), QStringLiteral("seeding"), seed, [&](Seeded s) {
      seeded_ = s;
      done = true;
    });
    QTRY_VERIFY(done);
  }
  void cleanup() {
    controller_.reset();
    engine_.reset();
    storage_.reset();
    dir_.reset();
  }

  void listsAndOpensWithBranches() {
    controller_->reloadConversations();
    auto* list = controller_->conversationModel();
    QTRY_COMPARE(list->rowCount(), 2);
    QSignalSpy opened(controller_.get(), &ChatController::conversationOpened);
    controller_->openConversation(seeded_.conversation);
    auto* chat = controller_->chatModel();
    QTRY_COMPARE(chat->rowCount(), 2);
    QCOMPARE(opened.count(), 1);
    QCOMPARE(chat->index(1).data(ChatModel::kTextRole).toString(), QStringLiteral("It enforces aliasing rules."));
    QCOMPARE(chat->index(1).data(ChatModel::kSiblingIndexRole).toInt(), 2);
    QCOMPARE(chat->index(1).data(ChatModel::kSiblingCountRole).toInt(), 2);

    controller_->switchSibling(seeded_.second_answer, -1);
    QTRY_COMPARE(chat->index(1).data(ChatModel::kIdRole).toLongLong(), seeded_.first_answer);
    QCOMPARE(chat->index(1).data(ChatModel::kTextRole).toString(), QStringLiteral("It checks references."));
    QCOMPARE(chat->index(1).data(ChatModel::kSiblingIndexRole).toInt(), 1);
    controller_->switchSibling(seeded_.first_answer, -1);  // no earlier version: nothing happens
    controller_->switchSibling(seeded_.first_answer, +1);
    QTRY_COMPARE(chat->index(1).data(ChatModel::kIdRole).toLongLong(), seeded_.second_answer);
  }

  void searchRenameDeleteUndo() {
    auto* list = controller_->conversationModel();
    controller_->search(QStringLiteral("aliasing"));
    QTRY_VERIFY(list->showingSearch() && list->rowCount() == 1);
    QCOMPARE(list->idAt(0), seeded_.conversation);
    QVERIFY2(list->index(0).data(ConversationListModel::kSnippetRole).toString().contains(QStringLiteral("[aliasing]")),
             qPrintable(list->index(0).data(ConversationListModel::kSnippetRole).toString()));
    controller_->search(QString());
    QTRY_VERIFY(!list->showingSearch() && list->rowCount() == 2);

    controller_->renameConversation(seeded_.conversation, QStringLiteral("  Ownership   notes "));
    QCOMPARE(list->titleOf(seeded_.conversation), QStringLiteral("Ownership notes"));
    QSignalSpy changed(storage_.get(), &StorageService::conversationsChanged);
    QTRY_COMPARE(changed.count(), 1);  // the list reads itself back from the store
    QTRY_COMPARE(list->titleOf(seeded_.conversation), QStringLiteral("Ownership notes"));

    QSignalSpy deleted(controller_.get(), &ChatController::conversationDeleted);
    controller_->deleteConversation(seeded_.conversation);
    QCOMPARE(deleted.count(), 1);
    QCOMPARE(deleted.at(0).at(1).toString(), QStringLiteral("Ownership notes"));
    QCOMPARE(list->rowOf(seeded_.conversation), -1);
    QTRY_COMPARE(changed.count(), 2);
    QTRY_COMPARE(list->rowCount(), 1);
    controller_->restoreConversation(seeded_.conversation);
    QTRY_COMPARE(list->rowCount(), 2);
    QVERIFY(list->rowOf(seeded_.conversation) >= 0);
  }

  // The list model subscribes to the storage: a write made by anyone shows
  // without a reload by hand; a read announces nothing.
  void listFollowsTheStoresChangeSignal() {
    auto* list = controller_->conversationModel();
    QTRY_COMPARE(list->rowCount(), 2);  // read when the controller started watching
    QSignalSpy changed(storage_.get(), &StorageService::conversationsChanged);
    storage_->write(QStringLiteral("adding"),
                    [](store::Store& s) { return s.create_conversation("Written elsewhere"); });
    QTRY_COMPARE(list->rowCount(), 3);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(list->titleOf(list->idAt(0)), QStringLiteral("Written elsewhere"));  // newest first
    storage_->write(QStringLiteral("renaming"),
                    [id = seeded_.conversation](store::Store& s) { return s.rename_conversation(id, "Renamed"); });
    QTRY_COMPARE(list->titleOf(seeded_.conversation), QStringLiteral("Renamed"));

    bool read = false;
    storage_->run(
        this, QStringLiteral("reading"), [](store::Store& s) { return s.list_conversations(); },
        [&read](std::vector<store::Conversation>) { read = true; });
    QTRY_VERIFY(read);
    QCOMPARE(changed.count(), 2);  // the read announced nothing

    controller_->search(QStringLiteral("aliasing"));  // a search re-runs on a change, and stays a search
    QTRY_VERIFY(list->showingSearch() && list->rowCount() == 1);
    storage_->write(QStringLiteral("adding"), [](store::Store& s) { return s.create_conversation("Unrelated"); });
    QTRY_COMPARE(changed.count(), 3);
    QTRY_VERIFY(list->showingSearch());
    QCOMPARE(list->rowCount(), 1);
  }

  void sendWithoutModelIsAnError() {
    QSignalSpy errors(controller_.get(), &ChatController::errorOccurred);
    controller_->send(QStringLiteral("hello"));
    QCOMPARE(errors.count(), 1);
    QVERIFY(errors.at(0).at(0).toString().contains(QStringLiteral("No model")));
    QVERIFY(!controller_->generating());
  }

  void databaseErrorsAreReported() {
    QSignalSpy errors(storage_.get(), &StorageService::error);
    controller_->openConversation(123456);  // no such conversation
    QTRY_COMPARE(errors.count(), 1);
    QVERIFY(errors.at(0).at(0).toString().startsWith(QStringLiteral("Database error while opening conversation")));
  }

 private:
  std::unique_ptr<QTemporaryDir> dir_;
  std::unique_ptr<StorageService> storage_;
  std::unique_ptr<EngineBridge> engine_;
  std::unique_ptr<ChatController> controller_;
  Seeded seeded_;
};

HEARTH_APP_TEST_MAIN(ChatControllerTest)
#include "chat_controller_test.moc"
