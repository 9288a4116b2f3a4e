// The chat over a fake ChatBackend (no model, no engine thread): a real store
// in a temporary folder, the ChatController and a ChatView on the offscreen
// platform. The fake streams tokens when the test says so, ends answers with
// errors, and honours cancellation; every wait is a QTRY_*.
#include <QApplication>
#include <QLabel>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QToolButton>

#include <algorithm>
#include <numeric>

#include "app/chat_backend.h"
#include "app/chat_controller.h"
#include "app/chat_model.h"
#include "app/chat_rows.h"
#include "app/chat_view.h"
#include "app/message_widget.h"
#include "app/prompted_backend.h"
#include "app/storage_service.h"
#include "long_answer.h"
#include "test_env.h"

using namespace hearth::app;
namespace store = hearth::store;
using hearth::FinishReason;

namespace {

// Records what the controller asks; the test plays the backend's side.
class FakeBackend final : public ChatBackend {
 public:
  FakeBackend() {
    LoadedModel m;
    m.path = QStringLiteral("/models/fake.gguf");
    m.name = QStringLiteral("Fake");
    m.quantization = QStringLiteral("Q4_K_M");
    m.device = QStringLiteral("cuda:0");
    m.kv_precision = QStringLiteral("fp8");
    model_ = m;
  }
  const std::optional<LoadedModel>& model() const override { return model_; }
  void generate(const GenerationRequest& request) override { requests.push_back(request); }
  void cancel(qint64 tag) override {
    cancelled.push_back(tag);
    finish(tag, FinishReason::kCancelled);  // as the engine does: the cancel ends the request
  }

  void stream(qint64 tag, const QString& text) { emit tokens(tag, text, 1); }
  void finish(qint64 tag, FinishReason reason, const QString& error = {}) {
    GenerationDone done;
    done.tag = tag;
    done.reason = reason;
    done.error = error;
    done.usage.prompt_tokens = 12;
    done.usage.generated_tokens = 3;
    emit finished(done);
  }

  std::vector<GenerationRequest> requests;
  std::vector<qint64> cancelled;

 private:
  std::optional<LoadedModel> model_;
};

// The text a message widget shows, from its labels and text views.
QString shown_text(const QWidget* w) {
  QString out;
  for (const QLabel* l : w->findChildren<QLabel*>()) out += l->text() + QLatin1Char('\n');
  for (const QTextBrowser* b : w->findChildren<QTextBrowser*>()) out += b->toPlainText() + QLatin1Char('\n');
  return out;
}

}  // namespace

class ChatBackendTest : public QObject {
  Q_OBJECT

 private slots:
  void init() {
    dir_ = std::make_unique<QTemporaryDir>();
    storage_ = std::make_unique<StorageService>(dir_->filePath(QStringLiteral("test.db")));
    backend_ = std::make_unique<FakeBackend>();
    controller_ = std::make_unique<ChatController>(storage_.get(), backend_.get());
    view_ = std::make_unique<ChatView>(controller_->chatModel());
    view_->resize(600, 400);
    view_->show();
  }
  void cleanup() {
    view_.reset();
    controller_.reset();
    backend_.reset();
    storage_->waitForIdle();
    storage_.reset();
    dir_.reset();
  }

  void streamsTokensIntoTheViewAndTheStore() {
    QSignalSpy generating(controller_.get(), &ChatController::generatingChanged);
    controller_->send(QStringLiteral("Say hello"));
    QTRY_COMPARE(backend_->requests.size(), std::size_t{1});
    const GenerationRequest request = backend_->requests.front();
    QCOMPARE(request.turns.back().role, std::string("user"));
    QCOMPARE(request.turns.back().content, std::string("Say hello"));
    QVERIFY(controller_->generating());

    backend_->stream(request.tag, QStringLiteral("Hel"));
    backend_->stream(request.tag, QStringLiteral("lo there"));
    QTRY_COMPARE(view_->messageCount(), 2);
    QTRY_VERIFY(shown_text(view_->messageAt(1)).contains(QStringLiteral("Hello there")));
    backend_->stream(request.tag + 1000, QStringLiteral("not this answer"));  // another tag: ignored
    backend_->finish(request.tag, FinishReason::kStop);
    QTRY_VERIFY(!controller_->generating());
    QCOMPARE(generating.last().at(0).toBool(), false);

    const ConversationPath path = readBack();
    QCOMPARE(path.rows.size(), std::size_t{2});
    QCOMPARE(path.rows[1].message.content, std::string("Hello there"));
    QVERIFY(path.rows[1].generation.has_value());
    // The record says what the backend reported, not a literal.
    QCOMPARE(path.rows[1].generation->device, std::string("cuda:0"));
    QCOMPARE(path.rows[1].generation->kv_precision, std::string("fp8"));
    QCOMPARE(path.rows[1].generation->quantization, std::string("Q4_K_M"));
    QCOMPARE(path.rows[1].generation->finish_reason, std::string("stop"));
  }

  void anErrorEndsTheAnswerAndIsShown() {
    QSignalSpy errors(controller_.get(), &ChatController::errorOccurred);
    controller_->send(QStringLiteral("Break, please"));
    QTRY_COMPARE(backend_->requests.size(), std::size_t{1});
    const qint64 tag = backend_->requests.front().tag;
    backend_->stream(tag, QStringLiteral("partial"));
    backend_->finish(tag, FinishReason::kError, QStringLiteral("out of memory: KV pool exhausted"));
    QTRY_VERIFY(!controller_->generating());
    QCOMPARE(errors.count(), 1);
    QVERIFY2(errors.at(0).at(0).toString().contains(QStringLiteral("KV pool exhausted")),
             qPrintable(errors.at(0).at(0).toString()));
    const ConversationPath path = readBack();
    QCOMPARE(path.rows.back().message.content, std::string("partial"));  // what was shown is kept
    QCOMPARE(path.rows.back().generation->finish_reason, std::string("error"));
    // The chat goes on: the next message is sent.
    controller_->send(QStringLiteral("Again"));
    QTRY_COMPARE(backend_->requests.size(), std::size_t{2});
  }

  void stopCancelsTheStreamingAnswer() {
    controller_->send(QStringLiteral("Tell me a long story"));
    QTRY_COMPARE(backend_->requests.size(), std::size_t{1});
    const qint64 tag = backend_->requests.front().tag;
    backend_->stream(tag, QStringLiteral("Once upon"));
    QTRY_VERIFY(shown_text(view_->messageAt(1)).contains(QStringLiteral("Once upon")));
    controller_->stop();
    QCOMPARE(backend_->cancelled, std::vector<qint64>{tag});
    QTRY_VERIFY(!controller_->generating());
    backend_->stream(tag, QStringLiteral(" a time"));  // late tokens after the finish: ignored
    const ConversationPath path = readBack();
    QCOMPARE(path.rows.back().message.content, std::string("Once upon"));
    QCOMPARE(path.rows.back().generation->finish_reason, std::string("cancelled"));
    QVERIFY(!shown_text(view_->messageAt(1)).contains(QStringLiteral("a time")));
  }

  // A 2,000-token answer in updates of 8 tokens (240 tok/s at the UI's 30 Hz):
  // what each update re-renders depends on the open block, not on how much
  // of the answer came before it.
  void streamingCostDoesNotGrowWithTheAnswer() {
    controller_->send(QStringLiteral("Tell me a long story"));
    QTRY_COMPARE(backend_->requests.size(), std::size_t{1});
    const qint64 tag = backend_->requests.front().tag;
    const auto tokens = hearth::app::testing::long_answer_tokens(2000);
    QTRY_COMPARE(view_->messageCount(), 2);
    MessageWidget* answer = view_->messageAt(1);
    std::vector<qint64> cost;  // characters re-rendered by each update
    QString full;
    for (std::size_t i = 0; i < tokens.size(); i += 8) {
      QString batch;
      for (std::size_t j = i; j < std::min(tokens.size(), i + 8); ++j) batch += tokens[j];
      full += batch;
      const qint64 before = answer->renderedCharacters();
      backend_->stream(tag, batch);  // direct connections: the view has updated on return
      cost.push_back(answer->renderedCharacters() - before);
    }
    QCOMPARE(view_->messageAt(1), answer);  // the same widget throughout
    QVERIFY(full.size() > 8000);
    qsizetype longest_block = 0;
    for (const auto& b : hearth::app::split_markdown(full)) longest_block = std::max(longest_block, b.text.size());
    const auto quarter = static_cast<std::ptrdiff_t>(cost.size() / 4);
    const double first = std::accumulate(cost.begin(), cost.begin() + quarter, 0.0) / static_cast<double>(quarter);
    const double last = std::accumulate(cost.end() - quarter, cost.end(), 0.0) / static_cast<double>(quarter);
    const qint64 worst = *std::max_element(cost.begin(), cost.end());
    const QString numbers = QStringLiteral("first quarter %1, last quarter %2 chars/update; worst %3; longest block %4")
                                .arg(first)
                                .arg(last)
                                .arg(worst)
                                .arg(longest_block);
    qInfo("%s", qPrintable(numbers));
    QVERIFY2(last < 2.0 * first, qPrintable(numbers));
    QVERIFY2(worst <= longest_block + 200, qPrintable(numbers));  // at most the open block and the new text
    // Re-rendering everything on each update would cost about half the answer per update.
    QVERIFY2(last * 10 < static_cast<double>(full.size()) / 2, qPrintable(numbers));
    // What is shown is the whole answer, block for block.
    backend_->finish(tag, FinishReason::kStop);
    QTRY_VERIFY(!controller_->generating());
    const auto blocks = hearth::app::split_markdown(full);
    QCOMPARE(answer->findChildren<QLabel*>(QStringLiteral("proseText")).size(),
             std::count_if(blocks.begin(), blocks.end(),
                           [](const auto& b) { return b.kind == hearth::app::MarkdownBlock::Kind::kText; }));
    QVERIFY(shown_text(answer).contains(blocks.back().text));
  }

  // An answer cut at the token limit offers Continue; the next version starts
  // with the cut text, the model is asked to go on from it, and the system
  // prompt of the settings goes first.
  void continueAfterALengthStop() {
    controller_.reset();
    PromptedBackend prompted(backend_.get());
    controller_ = std::make_unique<ChatController>(storage_.get(), &prompted);
    controller_->setSystemPrompt(QStringLiteral("Be brief."));
    view_ = std::make_unique<ChatView>(controller_->chatModel());
    view_->show();
    connect(view_.get(), &ChatView::continueRequested, this,
            [&](qint64 id) { QVERIFY(continue_answer(*controller_, prompted, id)); });
    controller_->send(QStringLiteral("Tell me a story"));
    QTRY_COMPARE(backend_->requests.size(), std::size_t{1});
    QCOMPARE(backend_->requests[0].turns.front().role, std::string("system"));
    QCOMPARE(backend_->requests[0].turns.front().content, std::string("Be brief."));
    QVERIFY(backend_->requests[0].continue_text.empty());
    const qint64 first = backend_->requests[0].tag;
    backend_->stream(first, QStringLiteral("Once upon a"));
    backend_->finish(first, FinishReason::kLength);
    QTRY_VERIFY(!controller_->generating());
    auto* button = view_->messageAt(1)->findChild<QToolButton*>(QStringLiteral("continueButton"));
    QTRY_VERIFY(button->isVisible());
    QCOMPARE(button->focusPolicy(), Qt::NoFocus);
    QVERIFY(shown_text(view_->messageAt(1)).contains(QStringLiteral("length")));

    QTest::mouseClick(button, Qt::LeftButton);
    QTRY_COMPARE(backend_->requests.size(), std::size_t{2});
    const GenerationRequest& again = backend_->requests[1];
    QCOMPARE(again.continue_text, std::string("Once upon a"));
    QCOMPARE(again.turns.back().content, std::string("Tell me a story"));  // the cut answer is not a turn
    QTRY_VERIFY(shown_text(view_->messageAt(1)).contains(QStringLiteral("Once upon a")));
    backend_->stream(again.tag, QStringLiteral(" time."));
    backend_->finish(again.tag, FinishReason::kStop);
    QTRY_VERIFY(!controller_->generating());
    QVERIFY(!view_->messageAt(1)->findChild<QToolButton*>(QStringLiteral("continueButton"))->isVisible());
    const ConversationPath path = readBack();
    QCOMPARE(path.rows.back().message.content, std::string("Once upon a time."));
    QCOMPARE(path.rows.back().sibling_count, 2);  // the cut version stays as the previous branch
    QVERIFY(path.rows.back().generation.has_value());
    QCOMPARE(path.rows.back().generation->system_text, std::string("Be brief."));  // recorded with the answer
    QCOMPARE(backend_->requests.size(), std::size_t{2});
    view_.reset();
    controller_.reset();
  }

 private:
  // The open conversation as the store has it (after the writes queued so far).
  ConversationPath readBack() {
    std::optional<ConversationPath> out;
    const store::Id conv = controller_->currentConversation();
    storage_->run(
        this, QStringLiteral("reading back"), [conv](store::Store& s) { return load_path(s, conv); },
        [&out](ConversationPath p) { out = std::move(p); });
    [&] { QTRY_VERIFY(out.has_value()); }();
    return out.value_or(ConversationPath{});
  }

  std::unique_ptr<QTemporaryDir> dir_;
  std::unique_ptr<StorageService> storage_;
  std::unique_ptr<FakeBackend> backend_;
  std::unique_ptr<ChatController> controller_;
  std::unique_ptr<ChatView> view_;
};

HEARTH_APP_TEST_MAIN(ChatBackendTest)
#include "chat_backend_test.moc"
