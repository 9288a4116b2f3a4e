// Prompt history review in the app (issue 15's GUI test list), offscreen,
// over a real store and a scripted fake backend: create a prompt, edit it
// twice, diff versions 1 and 3; pin version 2, send, the generation records
// version 2; rate the answer from the chat view; open the history window,
// filter by version, open the entry (the chat jumps to it), re-run it with
// version 3 and see the compare view; run a 3-prompt experiment (all 6
// generations submitted at once) and reopen it; the variables form; export
// and import from the app (a second import adds no prompt). Widgets are
// found by objectName; every wait is a QTRY_*.
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

#include "app/chat_backend.h"
#include "app/chat_controller.h"
#include "app/chat_model.h"
#include "app/chat_view.h"
#include "app/compare_view.h"
#include "app/experiment_runner.h"
#include "app/experiment_window.h"
#include "app/export_actions.h"
#include "app/history_model.h"
#include "app/history_window.h"
#include "app/message_widget.h"
#include "app/prompt_diff_view.h"
#include "app/prompt_library_panel.h"
#include "app/rating_marks.h"
#include "app/rerun_dialog.h"
#include "app/storage_service.h"
#include "app/variables_form.h"
#include "settings/settings.h"
#include "test_env.h"

using namespace hearth::app;
namespace store = hearth::store;

namespace {

class FakeBackend final : public ChatBackend {
 public:
  FakeBackend() {
    LoadedModel m;
    m.path = QStringLiteral("/models/fake.gguf");
    m.name = QStringLiteral("fake");
    m.quantization = QStringLiteral("Q4_1");
    m.device = QStringLiteral("cpu");
    m.kv_precision = QStringLiteral("f16");
    model_ = m;
  }
  const std::optional<LoadedModel>& model() const override { return model_; }
  void generate(const GenerationRequest& request) override { requests.push_back(request); }
  void cancel(qint64) override {}
  void answer(const GenerationRequest& r, const QString& text, double ttft_ms = 10) {
    emit tokens(r.tag, text, 1);
    GenerationDone done;
    done.tag = r.tag;
    done.usage.prompt_tokens = 5;
    done.usage.generated_tokens = static_cast<int>(text.split(QLatin1Char(' ')).size());
    done.usage.ttft_ms = ttft_ms;
    emit finished(done);
  }
  std::vector<GenerationRequest> requests;

 private:
  std::optional<LoadedModel> model_;
};

}  // namespace

class PromptReviewTest : public QObject {
  Q_OBJECT

 private slots:
  void init() {
    dir_ = std::make_unique<QTemporaryDir>();
    storage_ = std::make_unique<StorageService>(dir_->filePath(QStringLiteral("test.db")));
    backend_ = std::make_unique<FakeBackend>();
    controller_ = std::make_unique<ChatController>(storage_.get(), backend_.get());
    view_ = std::make_unique<ChatView>(controller_->chatModel());
    connect(view_.get(), &ChatView::rateRequested, controller_.get(),
            [this](qint64 id, int r) { controller_->rate(id, static_cast<store::Rating>(r)); });
    connect(controller_.get(), &ChatController::messageShown, view_.get(), &ChatView::highlightMessage);
    panel_ = std::make_unique<PromptLibraryPanel>(storage_.get(), controller_.get());
    panel_->resize(400, 800);
    panel_->show();
    view_->resize(600, 600);
    view_->show();
  }
  void cleanup() {
    panel_.reset();
    view_.reset();
    controller_.reset();
    backend_.reset();
    storage_->waitForIdle();
    storage_.reset();
    dir_.reset();
  }

  void theIssuesGuiList() {
    // Create a prompt and edit it twice; diff versions 1 and 3.
    createPrompt(QStringLiteral("helper"),
                 {QStringLiteral("Be kind to the user."), QStringLiteral("Be brief with the user."),
                  QStringLiteral("Be exact with every user.")});
    PromptDiffView* diff = panel_->compareVersions(1, 3);
    QVERIFY(diff);
    QTRY_VERIFY(diff->ready());
    QCOMPARE(diff->findChild<QComboBox*>(QStringLiteral("diffOldVersion"))->currentData(Qt::UserRole + 1).toInt(), 1);
    QCOMPARE(diff->findChild<QComboBox*>(QStringLiteral("diffNewVersion"))->currentData(Qt::UserRole + 1).toInt(), 3);
    // "kind to the" -> "exact with every": 3 words out, 3 in; "user." -> "user." stays.
    QCOMPARE(diff->deletedWords(), 3);
    QCOMPARE(diff->insertedWords(), 3);
    QVERIFY(diff->oldHtml().contains(QStringLiteral("kind")));
    QVERIFY(diff->newHtml().contains(QStringLiteral("every")));
    QVERIFY(!diff->newHtml().contains(QStringLiteral("kind")));

    // Pin version 2, send: the generation records version 2.
    panel_->selectVersion(2);
    click(panel_.get(), "pinVersion");
    QTRY_VERIFY(
        panel_->findChild<QLabel*>(QStringLiteral("pinnedPrompt"))->text().contains(QStringLiteral("helper@2")));
    const GenerationRequest first = sendAndWait(QStringLiteral("How do tides work?"));
    QCOMPARE(first.turns.front().content, std::string("Be brief with the user."));
    backend_->answer(first, QStringLiteral("The moon pulls the sea."), 30);
    QTRY_VERIFY(!controller_->generating());
    QCOMPARE(recordedVersion(first.tag), 2);

    // Rate it from the chat view: stored, and the button shows it.
    MessageWidget* answer = nullptr;
    QTRY_VERIFY((answer = messageWidget(first.tag)) != nullptr);
    auto* up = answer->findChild<QToolButton*>(QStringLiteral("rateUp"));
    QVERIFY(up && up->isVisible());
    QTest::mouseClick(up, Qt::LeftButton);
    QTRY_COMPARE(storedRating(first.tag), store::Rating::kUp);
    QTRY_VERIFY(messageWidget(first.tag)->findChild<QToolButton*>(QStringLiteral("rateUp"))->isChecked());
    // The version's metrics say so.
    panel_->selectVersion(3);
    panel_->selectVersion(2);
    auto* metrics = panel_->findChild<QLabel*>(QStringLiteral("versionMetrics"));
    QTRY_VERIFY(metrics->text().contains(QStringLiteral("1 answer")));
    QVERIFY(metrics->text().contains(rated_up_mark() + QStringLiteral(" 1")));
    QVERIFY(metrics->text().contains(QStringLiteral("30.0 ms")));

    // Two more prompts with version 3 (through its label) for the history and the experiment.
    controller_->pinPrompt(QStringLiteral("helper@latest"));
    QTRY_VERIFY(panel_->findChild<QLabel*>(QStringLiteral("pinnedPrompt"))->text().contains(QStringLiteral("latest")));
    for (const QString& q : {QStringLiteral("Why is the sky blue?"), QStringLiteral("What is a comet?")}) {
      const GenerationRequest r = sendAndWait(q);
      QCOMPARE(r.turns.front().content, std::string("Be exact with every user."));
      backend_->answer(r, QStringLiteral("Because of physics."));
      QTRY_VERIFY(!controller_->generating());
    }

    // The history window: three prompts, newest first; filtered by version 2, one.
    HistoryWindow window(storage_.get(), controller_.get(), backend_.get());
    window.show();
    QTRY_COMPARE(window.model()->total(), 3);
    QCOMPARE(window.model()->rowCount(), 3);
    QCOMPARE(window.model()->index(0, HistoryModel::kText).data().toString(), QStringLiteral("What is a comet?"));
    QCOMPARE(window.model()->index(2, HistoryModel::kPromptVersion).data().toString(), QStringLiteral("helper@2"));
    QCOMPARE(window.model()->index(2, HistoryModel::kModel).data().toString(), QStringLiteral("fake"));
    auto* prompt = window.findChild<QComboBox*>(QStringLiteral("historyPrompt"));
    prompt->setEditText(QStringLiteral("helper@2"));
    window.applyFilters();
    QTRY_COMPARE(window.model()->total(), 1);
    QTRY_COMPARE(window.model()->rowCount(), 1);
    QCOMPARE(window.model()->index(0, HistoryModel::kText).data().toString(), QStringLiteral("How do tides work?"));
    // Sorting by a column asks the store again (TTFT ascending over all three).
    prompt->setEditText(QString());
    window.applyFilters();
    QTRY_COMPARE(window.model()->rowCount(), 3);
    window.table()->sortByColumn(HistoryModel::kTtft, Qt::DescendingOrder);
    QTRY_COMPARE(window.model()->index(0, HistoryModel::kTtft).data().toString(), QStringLiteral("30.0"));
    prompt->setEditText(QStringLiteral("helper@2"));
    window.applyFilters();
    QTRY_COMPARE(window.model()->rowCount(), 1);

    // Opening the entry: a fresh conversation view jumps to the message.
    controller_->newConversation();
    QTRY_COMPARE(view_->messageCount(), 0);
    window.table()->selectRow(0);
    QSignalSpy open(&window, &HistoryWindow::openRequested);
    click(&window, "historyOpen");
    QCOMPARE(open.count(), 1);
    const qint64 user_id = open.at(0).at(1).toLongLong();
    controller_->showMessage(open.at(0).at(0).toLongLong(), user_id);
    QTRY_COMPARE(view_->highlightedMessage(), user_id);

    // Re-run it with version 3: the compare view shows both answers.
    click(&window, "historyRerun");
    RerunDialog* dialog = nullptr;
    QTRY_VERIFY((dialog = window.findChild<RerunDialog*>()) != nullptr);
    dialog->findChild<QComboBox*>(QStringLiteral("rerunPrompt"))->setEditText(QStringLiteral("helper@3"));
    click(dialog, "rerunRun");
    QTRY_COMPARE(backend_->requests.size(), std::size_t{4});
    const GenerationRequest rerun = backend_->requests.back();
    QCOMPARE(rerun.turns.front().content, std::string("Be exact with every user."));
    QCOMPARE(rerun.turns.back().content, std::string("How do tides work?"));
    QCOMPARE(rerun.sampling.seed, first.sampling.seed);  // the earlier answer's sampling, seed included
    CompareView* compare = window.findChild<CompareView*>();
    QVERIFY(compare);
    backend_->answer(rerun, QStringLiteral("The moon and the sun pull the sea."), 12);
    QTRY_VERIFY(compare->ready());
    QCOMPARE(compare->oldAnswer(), first.tag);
    QCOMPARE(compare->newAnswer(), rerun.tag);
    QCOMPARE(compare->oldText(), QStringLiteral("The moon pulls the sea."));
    QCOMPARE(compare->newText(), QStringLiteral("The moon and the sun pull the sea."));
    QVERIFY(compare->oldParameters().contains(QStringLiteral("helper@2")));
    QVERIFY(compare->newParameters().contains(QStringLiteral("helper@3")));
    QVERIFY(compare->newParameters().contains(QStringLiteral("12.0 ms")));
    QVERIFY(compare->changedWords() > 0);
    QCOMPARE(recordedVersion(rerun.tag), 3);
    QCOMPARE(siblingCount(rerun.tag), 2);  // a sibling branch of the first answer

    // A 3-prompt experiment: version 1 against version 3, all 6 generations submitted at once.
    prompt->setEditText(QString());
    window.applyFilters();
    QTRY_COMPARE(window.model()->total(), 3);
    click(&window, "historyExperiment");
    ExperimentWindow* experiment = nullptr;
    QTRY_VERIFY((experiment = window.findChild<ExperimentWindow*>()) != nullptr);
    QTRY_VERIFY(experiment->versionsLoaded());
    auto* a = experiment->findChild<QComboBox*>(QStringLiteral("experimentVersionA"));
    auto* b = experiment->findChild<QComboBox*>(QStringLiteral("experimentVersionB"));
    a->setCurrentIndex(a->findText(QStringLiteral("helper@1")));
    b->setCurrentIndex(b->findText(QStringLiteral("helper@3")));
    experiment->findChild<QSpinBox*>(QStringLiteral("experimentCount"))->setValue(3);
    click(experiment, "experimentRun");
    QTRY_COMPARE(backend_->requests.size(), std::size_t{10});
    std::vector<GenerationRequest> batch(backend_->requests.begin() + 4, backend_->requests.end());
    int with_v1 = 0, with_v3 = 0;
    for (const auto& r : batch) {
      with_v1 += r.turns.front().content == "Be kind to the user.";
      with_v3 += r.turns.front().content == "Be exact with every user.";
    }
    QCOMPARE(with_v1, 3);
    QCOMPARE(with_v3, 3);
    for (std::size_t i = 0; i < batch.size(); ++i) {
      backend_->answer(batch[i], QStringLiteral("answer %1").arg(i), 5.0 + static_cast<double>(i));
    }
    QTRY_VERIFY(!experiment->runner()->running());
    QTRY_COMPARE(experiment->results()->rowCount(), 4);  // 3 prompts and the aggregate
    const qint64 experiment_id = experiment->shownExperiment();
    QVERIFY(experiment_id > 0);
    QTRY_COMPARE(experiment->results()->index(0, ExperimentWindow::kFinishA).data().toString(), QStringLiteral("stop"));
    for (int row = 0; row < 3; ++row) {
      QVERIFY(experiment->results()->index(row, ExperimentWindow::kAnswerA).data().toString().startsWith("answer"));
      QVERIFY(experiment->results()->index(row, ExperimentWindow::kAnswerB).data().toString().startsWith("answer"));
    }
    QVERIFY(experiment->results()->index(3, ExperimentWindow::kAnswerA).data().toString().startsWith("3 answer"));
    // The conversation still shows the branch it showed (the experiment's answers are siblings).
    QCOMPARE(shownLeafIsNot(batch), true);

    // Reopened from the store in a new window.
    ExperimentWindow again(storage_.get(), backend_.get(), {});
    auto* past = again.findChild<QListView*>(QStringLiteral("experimentList"));
    QTRY_COMPARE(past->model()->rowCount(), 1);
    again.showExperiment(experiment_id);
    QTRY_COMPARE(again.results()->rowCount(), 4);
    QCOMPARE(again.results()->index(1, ExperimentWindow::kAnswerB).data().toString(),
             experiment->results()->index(1, ExperimentWindow::kAnswerB).data().toString());
  }

  // A pinned prompt with a {{variable}} the conversation never filled: the
  // form asks for it (no "Database error"), the value reaches the system
  // text and is recorded; the next message reuses it without asking.
  void variablesAreAskedForAndRecorded() {
    createPrompt(QStringLiteral("tutor"), {QStringLiteral("You teach {{subject}} to {{level}} students.")});
    controller_->pinPrompt(QStringLiteral("tutor@1"));
    QSignalSpy errors(storage_.get(), &StorageService::error);
    QSignalSpy asked(controller_.get(), &ChatController::variablesNeeded);
    controller_->send(QStringLiteral("Where do I start?"));
    QTRY_COMPARE(asked.count(), 1);
    QCOMPARE(asked.at(0).at(2).toStringList(), (QStringList{QStringLiteral("subject"), QStringLiteral("level")}));
    QVERIFY(!controller_->generating());
    QVERIFY(backend_->requests.empty());
    QCOMPARE(errors.count(), 0);

    QWidget host;
    ask_for_variables(&host, controller_.get(), asked.at(0).at(0).toString(), asked.at(0).at(1).toString(),
                      asked.at(0).at(2).toStringList(), asked.at(0).at(3).toMap());
    VariablesForm* form = nullptr;
    QTRY_VERIFY((form = host.findChild<VariablesForm*>()) != nullptr);
    form->field(QStringLiteral("subject"))->setText(QStringLiteral("chemistry"));
    form->field(QStringLiteral("level"))->setText(QStringLiteral("first-year"));
    click(form, "variablesSend");
    QTRY_COMPARE(backend_->requests.size(), std::size_t{1});
    QCOMPARE(backend_->requests[0].turns.front().content, std::string("You teach chemistry to first-year students."));
    backend_->answer(backend_->requests[0], QStringLiteral("With atoms."));
    QTRY_VERIFY(!controller_->generating());
    std::map<std::string, std::string> recorded;
    readBack([&](store::Store& s) -> store::StoreResult<bool> {
      STORE_ASSIGN_OR_RETURN(const auto g, s.get_generation(backend_->requests[0].tag));
      if (g) recorded = g->variables;
      return true;
    });
    QCOMPARE(recorded.at("subject"), std::string("chemistry"));
    QCOMPARE(recorded.at("level"), std::string("first-year"));

    controller_->send(QStringLiteral("And then?"));  // remembered: no form
    QTRY_COMPARE(backend_->requests.size(), std::size_t{2});
    QCOMPARE(asked.count(), 1);
    QCOMPARE(backend_->requests[1].turns.front().content, std::string("You teach chemistry to first-year students."));
    backend_->answer(backend_->requests[1], QStringLiteral("Molecules."));
    QTRY_VERIFY(!controller_->generating());

    // Declining the form gives the text back.
    controller_->newConversation();
    controller_->pinPrompt(QStringLiteral("tutor@1"));
    QSignalSpy unsent(controller_.get(), &ChatController::unsentText);
    controller_->send(QStringLiteral("Hello?"));
    QTRY_COMPARE(asked.count(), 2);
    controller_->cancelVariables(asked.at(1).at(0).toString());
    QCOMPARE(unsent.count(), 1);
    QCOMPARE(unsent.at(0).at(0).toString(), QStringLiteral("Hello?"));
    QCOMPARE(errors.count(), 0);
    // Values that still leave one out (a caller's bug): refused with a message naming it, not "Database error".
    controller_->sendWithVariables(QStringLiteral("Hello?"), {{"subject", "art"}});
    QTRY_COMPARE(errors.count(), 1);
    const QString message = errors.at(0).at(0).toString();
    QVERIFY2(!message.contains(QStringLiteral("Database error")), qPrintable(message));
    QVERIFY2(message.contains(QStringLiteral("level")), qPrintable(message));
    QTRY_COMPARE(unsent.count(), 2);  // and the text goes back to the input box
  }

  // The app's database is hearth-cli's default one, its folder made.
  void theAppUsesTheCliDatabase() {
    const auto cli = hearth::settings::default_database_path();
    QVERIFY(cli.ok());
    const QString path = default_database_path();
    QCOMPARE(path, QString::fromStdString(cli->string()));
    QVERIFY(QFileInfo(path).absoluteDir().exists());
  }

  void exportAndImportFromTheApp() {
    createPrompt(QStringLiteral("pirate"), {QStringLiteral("Talk like a pirate.")});
    controller_->pinPrompt(QStringLiteral("pirate@1"));
    const GenerationRequest r = sendAndWait(QStringLiteral("Ahoy?"));
    backend_->answer(r, QStringLiteral("Arr."));
    QTRY_VERIFY(!controller_->generating());
    const QString all = dir_->filePath(QStringLiteral("all.json"));
    const QString md = dir_->filePath(QStringLiteral("one.md"));
    QString said;
    export_to_file(storage_.get(), this, 0, ExportFormat::kJson, all, [&](const QString& m) { said = m; });
    QTRY_VERIFY(said.startsWith(QStringLiteral("Exported")));
    said.clear();
    export_to_file(storage_.get(), this, controller_->currentConversation(), ExportFormat::kMarkdown, md,
                   [&](const QString& m) { said = m; });
    QTRY_VERIFY(!said.isEmpty());
    QFile markdown(md);
    QVERIFY(markdown.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(markdown.readAll());
    QVERIFY(text.contains(QStringLiteral("Ahoy?")));
    QVERIFY(text.contains(QStringLiteral("Arr.")));

    const auto prompts = [&] {
      std::size_t n = 0;
      readBack([&](store::Store& s) -> store::StoreResult<bool> {
        STORE_ASSIGN_OR_RETURN(const auto list, s.list_prompts(true));
        n = list.size();
        return true;
      });
      return n;
    };
    const std::size_t before = prompts();
    for (int i = 0; i < 2; ++i) {
      said.clear();
      import_from_file(storage_.get(), this, all, [&](const QString& m) { said = m; });
      QTRY_VERIFY(said.startsWith(QStringLiteral("Imported 1 conversation")));
      QVERIFY2(said.contains(QStringLiteral("(1 already here)")), qPrintable(said));
    }
    QCOMPARE(prompts(), before);  // the same file twice: no prompt copied
  }

 private:
  static void click(QWidget* in, const char* name) {
    auto* b = in->findChild<QPushButton*>(QLatin1String(name));
    QVERIFY2(b, name);
    QTest::mouseClick(b, Qt::LeftButton);
  }

  void createPrompt(const QString& name, const QStringList& versions) {
    auto* list = panel_->findChild<QListView*>(QStringLiteral("versionList"));
    auto* text = panel_->findChild<QPlainTextEdit*>(QStringLiteral("promptText"));
    panel_->findChild<QLineEdit*>(QStringLiteral("promptName"))->setText(name);
    text->setPlainText(versions.front());
    click(panel_.get(), "createPrompt");
    QTRY_COMPARE(panel_->selectedPrompt(), name);
    QTRY_COMPARE(list->model()->rowCount(), 1);
    for (int i = 1; i < versions.size(); ++i) {
      text->setPlainText(versions[i]);
      click(panel_.get(), "saveVersion");
      QTRY_COMPARE(list->model()->rowCount(), i + 1);
    }
    QTRY_COMPARE(panel_->selectedVersion(), static_cast<int>(versions.size()));
  }

  GenerationRequest sendAndWait(const QString& text) {
    const std::size_t before = backend_->requests.size();
    controller_->send(text);
    [&] { QTRY_COMPARE(backend_->requests.size(), before + 1); }();
    return backend_->requests.back();
  }

  template <class Work>
  void readBack(Work work) {
    bool done = false;
    storage_->run(this, QStringLiteral("reading back"), work, [&](bool) { done = true; });
    [&] { QTRY_VERIFY(done); }();
  }

  int recordedVersion(store::Id answer) {
    int out = -1;
    readBack([&](store::Store& s) -> store::StoreResult<bool> {
      STORE_ASSIGN_OR_RETURN(const auto g, s.get_generation(answer));
      out = 0;
      if (!g || !g->prompt_version_id) return true;
      STORE_ASSIGN_OR_RETURN(const auto v, s.get_prompt_version(*g->prompt_version_id));
      out = v.version;
      return true;
    });
    return out;
  }

  store::Rating storedRating(store::Id answer) {
    store::Rating out = store::Rating::kNone;
    readBack([&](store::Store& s) -> store::StoreResult<bool> {
      STORE_ASSIGN_OR_RETURN(out, s.get_rating(answer));
      return true;
    });
    return out;
  }

  int siblingCount(store::Id message) {
    int out = 0;
    readBack([&](store::Store& s) -> store::StoreResult<bool> {
      STORE_ASSIGN_OR_RETURN(const auto siblings, s.siblings(message));
      out = static_cast<int>(siblings.ids.size());
      return true;
    });
    return out;
  }

  // No conversation's current leaf is one of the experiment's answers.
  bool shownLeafIsNot(const std::vector<GenerationRequest>& batch) {
    bool clean = true;
    readBack([&](store::Store& s) -> store::StoreResult<bool> {
      STORE_ASSIGN_OR_RETURN(const auto conversations, s.list_conversations());
      for (const auto& c : conversations) {
        for (const auto& r : batch) clean = clean && c.current_leaf_id != r.tag;
      }
      return true;
    });
    return clean;
  }

  MessageWidget* messageWidget(store::Id id) {
    for (int i = 0; i < view_->messageCount(); ++i) {
      if (view_->messageAt(i)->messageId() == id) return view_->messageAt(i);
    }
    return nullptr;
  }

  std::unique_ptr<QTemporaryDir> dir_;
  std::unique_ptr<StorageService> storage_;
  std::unique_ptr<FakeBackend> backend_;
  std::unique_ptr<ChatController> controller_;
  std::unique_ptr<ChatView> view_;
  std::unique_ptr<PromptLibraryPanel> panel_;
};

HEARTH_APP_TEST_MAIN(PromptReviewTest)
#include "prompt_review_test.moc"
