// The prompt library panel on the offscreen platform, over a real store and
// a fake backend: create a prompt, save two more versions, pin version 2 and
// send (the request carries version 2's text as the system message and the
// generation records version 2), label version 3 and pin the label (the next
// answer uses version 3). Widgets are found by objectName; waits are QTRY_*.
#include <QApplication>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "app/chat_backend.h"
#include "app/chat_controller.h"
#include "app/chat_rows.h"
#include "app/prompt_library_panel.h"
#include "app/storage_service.h"
#include "test_env.h"

using namespace hearth::app;
namespace store = hearth::store;
using hearth::FinishReason;

namespace {

class FakeBackend final : public ChatBackend {
 public:
  FakeBackend() {
    LoadedModel m;
    m.path = QStringLiteral("/models/fake.gguf");
    m.quantization = QStringLiteral("Q4_1");
    m.device = QStringLiteral("cpu");
    m.kv_precision = QStringLiteral("f16");
    model_ = m;
  }
  const std::optional<LoadedModel>& model() const override { return model_; }
  void generate(const GenerationRequest& request) override { requests.push_back(request); }
  void cancel(qint64) override {}
  void answer(qint64 tag, const QString& text) {
    emit tokens(tag, text, 1);
    GenerationDone done;
    done.tag = tag;
    done.usage.prompt_tokens = 5;
    done.usage.generated_tokens = 1;
    emit finished(done);
  }
  std::vector<GenerationRequest> requests;

 private:
  std::optional<LoadedModel> model_;
};

}  // namespace

class PromptLibraryTest : public QObject {
  Q_OBJECT

 private slots:
  void init() {
    dir_ = std::make_unique<QTemporaryDir>();
    storage_ = std::make_unique<StorageService>(dir_->filePath(QStringLiteral("test.db")));
    backend_ = std::make_unique<FakeBackend>();
    controller_ = std::make_unique<ChatController>(storage_.get(), backend_.get());
    panel_ = std::make_unique<PromptLibraryPanel>(storage_.get(), controller_.get());
    panel_->resize(400, 700);
    panel_->show();
  }
  void cleanup() {
    panel_.reset();
    controller_.reset();
    backend_.reset();
    storage_->waitForIdle();
    storage_.reset();
    dir_.reset();
  }

  void versionsPinsAndLabelsReachTheAnswers() {
    auto* versions = panel_->findChild<QListView*>(QStringLiteral("versionList"));
    auto* text = panel_->findChild<QPlainTextEdit*>(QStringLiteral("promptText"));
    QVERIFY(versions && text);
    panel_->findChild<QLineEdit*>(QStringLiteral("promptName"))->setText(QStringLiteral("helper"));
    text->setPlainText(QStringLiteral("Be kind."));
    click("createPrompt");
    QTRY_COMPARE(panel_->selectedPrompt(), QStringLiteral("helper"));
    QTRY_COMPARE(versions->model()->rowCount(), 1);
    text->setPlainText(QStringLiteral("Be brief."));
    panel_->findChild<QLineEdit*>(QStringLiteral("promptNote"))->setText(QStringLiteral("shorter"));
    click("saveVersion");
    QTRY_COMPARE(versions->model()->rowCount(), 2);
    text->setPlainText(QStringLiteral("Be exact."));
    click("saveVersion");
    QTRY_COMPARE(versions->model()->rowCount(), 3);
    QTRY_COMPARE(panel_->selectedVersion(), 3);  // the new version is selected
    QVERIFY(versions->model()->index(1, 0).data().toString().contains(QStringLiteral("shorter")));

    // Version 2 pinned before the first message: the first send applies and pins it.
    panel_->selectVersion(2);
    QCOMPARE(text->toPlainText(), QStringLiteral("Be brief."));  // the editor shows the selected version
    click("pinVersion");
    auto* pinned = panel_->findChild<QLabel*>(QStringLiteral("pinnedPrompt"));
    QTRY_VERIFY(pinned->text().contains(QStringLiteral("helper@2")));
    controller_->send(QStringLiteral("Hello"));
    QTRY_COMPARE(backend_->requests.size(), std::size_t{1});
    QCOMPARE(backend_->requests[0].turns.front().role, std::string("system"));
    QCOMPARE(backend_->requests[0].turns.front().content, std::string("Be brief."));
    backend_->answer(backend_->requests[0].tag, QStringLiteral("Hi."));
    QTRY_VERIFY(!controller_->generating());
    QCOMPARE(recordedVersion(backend_->requests[0].tag), 2);

    // A label on version 3, pinned: the next answer uses version 3.
    panel_->selectVersion(3);
    panel_->findChild<QLineEdit*>(QStringLiteral("labelName"))->setText(QStringLiteral("production"));
    click("setLabel");
    QTRY_VERIFY(versions->model()->index(2, 0).data().toString().contains(QStringLiteral("production")));
    click("pinLabel");
    QTRY_VERIFY(pinned->text().contains(QStringLiteral("helper@production")));
    controller_->send(QStringLiteral("And now?"));
    QTRY_COMPARE(backend_->requests.size(), std::size_t{2});
    QCOMPARE(backend_->requests[1].turns.front().content, std::string("Be exact."));
    backend_->answer(backend_->requests[1].tag, QStringLiteral("Exactly."));
    QTRY_VERIFY(!controller_->generating());
    QCOMPARE(recordedVersion(backend_->requests[1].tag), 3);
  }

 private:
  void click(const char* name) {
    auto* b = panel_->findChild<QPushButton*>(QLatin1String(name));
    QVERIFY2(b, name);
    QTest::mouseClick(b, Qt::LeftButton);
  }
  // The version number the store recorded for an answer (0: none).
  int recordedVersion(store::Id answer) {
    std::optional<int> out;
    storage_->run(
        this, QStringLiteral("reading back"),
        [answer](store::Store& s) -> store::StoreResult<int> {
          STORE_ASSIGN_OR_RETURN(const auto g, s.get_generation(answer));
          if (!g || !g->prompt_version_id) return 0;
          STORE_ASSIGN_OR_RETURN(const auto v, s.get_prompt_version(*g->prompt_version_id));
          return v.version;
        },
        [&out](int v) { out = v; });
    [&] { QTRY_VERIFY(out.has_value()); }();
    return out.value_or(-1);
  }

  std::unique_ptr<QTemporaryDir> dir_;
  std::unique_ptr<StorageService> storage_;
  std::unique_ptr<FakeBackend> backend_;
  std::unique_ptr<ChatController> controller_;
  std::unique_ptr<PromptLibraryPanel> panel_;
};

HEARTH_APP_TEST_MAIN(PromptLibraryTest)
#include "prompt_library_test.moc"
