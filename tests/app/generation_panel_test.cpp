// The generation settings panel on the offscreen platform with the default
// model: what the panel says reaches the engine and is recorded with the
// answer (sampling, seed, the token limit, the system prompt); an answer cut
// by the limit says "length"; settings are per conversation, and "Save as
// defaults" writes the settings file.
#include <QApplication>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

#include "app/chat_controller.h"
#include "app/chat_model.h"
#include "app/chat_rows.h"
#include "app/engine_bridge.h"
#include "app/generation_panel.h"
#include "app/main_window.h"
#include "app/message_widget.h"
#include "app/storage_service.h"
#include "settings/settings.h"
#include "test_env.h"

using namespace hearth::app;
namespace store = hearth::store;

namespace {

constexpr int kTimeoutMs = 120000;

template <class T>
T* child(QObject* root, const char* name) {
  T* w = root->findChild<T*>(QString::fromLatin1(name));
  if (!w) qWarning("no child named %s", name);
  return w;
}

}  // namespace

class GenerationPanelTest : public QObject {
  Q_OBJECT

 private slots:
  void settingsReachTheEngineAndTheRecord() {
    QTemporaryDir dir;
    MainWindowOptions options;
    options.database_path = dir.filePath(QStringLiteral("hearth.db"));
    options.settings_path = dir.filePath(QStringLiteral("settings.json"));
    MainWindow window(options);
    window.resize(1200, 800);
    window.show();
    QTRY_VERIFY_WITH_TIMEOUT(window.engine()->model().has_value(), kTimeoutMs);
    auto* panel = window.generationPanel();
    QVERIFY(panel->isVisible());
    QCOMPARE(child<QSpinBox>(panel, "maxTokensSpin")->value(), hearth::settings::Settings{}.max_tokens);

    // The user's choices: a preset, then fields by hand.
    auto* preset = child<QComboBox>(panel, "presetCombo");
    preset->setCurrentIndex(1);  // "Precise"
    emit preset->activated(1);
    QCOMPARE(child<QDoubleSpinBox>(panel, "temperatureSpin")->value(), 0.2);
    child<QSpinBox>(panel, "topKSpin")->setValue(7);
    QCOMPARE(preset->currentText(), QStringLiteral("Custom"));
    child<QSpinBox>(panel, "maxTokensSpin")->setValue(6);
    QTest::keyClicks(child<QLineEdit>(panel, "seedEdit"), QStringLiteral("4242"));
    const auto answer = sendAndRead(&window, QStringLiteral("Count from one to twenty."));
    QVERIFY(answer.generation.has_value());
    const auto& g = *answer.generation;
    QCOMPARE(g.sampling.temperature, 0.2);  // recorded as the decimal that was set (conversation/recorder.cpp)
    QCOMPARE(g.sampling.top_k, 7);
    QCOMPARE(g.sampling.seed, std::uint64_t{4242});
    QCOMPARE(g.generated_tokens, std::int64_t{6});
    QCOMPARE(g.finish_reason, std::string("length"));
    auto* stats = child<MessageWidget>(&window, "message_1")->findChild<QLabel*>(QStringLiteral("statsLabel"));
    QTRY_VERIFY(stats->text().contains(QStringLiteral("length")));
    const std::int64_t plain_prompt = g.prompt_tokens;

    // Continue: the next version goes on from the cut text, through the engine.
    {
      QSignalSpy finished(window.controller(), &ChatController::answerFinished);
      auto* go_on =
          child<MessageWidget>(&window, "message_1")->findChild<QToolButton*>(QStringLiteral("continueButton"));
      QTRY_VERIFY(go_on->isVisible());
      QTest::mouseClick(go_on, Qt::LeftButton);
      QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, kTimeoutMs);
      const auto* row = window.controller()->chatModel()->row(1);
      QVERIFY(row && row->sibling_count == 2);
      qInfo("cut: \"%s\", continued: \"%s\"", answer.message.content.c_str(), row->message.content.c_str());
      QVERIFY2(row->message.content.rfind(answer.message.content, 0) == 0 &&
                   row->message.content.size() > answer.message.content.size(),
               row->message.content.c_str());
      QCOMPARE(finished.at(0).at(0).value<GenerationDone>().usage.generated_tokens, 6);  // the new tokens only
    }

    // A system prompt goes before the conversation: the same question costs more prompt tokens. (The
    // default model's template has a system prompt of its own when none is sent: this one is longer.)
    window.controller()->newConversation();
    QTRY_COMPARE(window.controller()->currentConversation(), qint64{0});
    // A new chat starts from the defaults, not from the last conversation's settings.
    QCOMPARE(child<QSpinBox>(panel, "maxTokensSpin")->value(), hearth::settings::Settings{}.max_tokens);
    child<QSpinBox>(panel, "maxTokensSpin")->setValue(4);
    child<QPlainTextEdit>(panel, "systemPromptEdit")
        ->setPlainText(QStringLiteral("You are a counting assistant. Always answer with digits only, one per line. "
                                      "Never write words, never explain, never greet, never apologise; digits only."));
    const auto second = sendAndRead(&window, QStringLiteral("Count from one to twenty."));
    QVERIFY(second.generation.has_value());
    QVERIFY(second.generation->generated_tokens <= 4);
    QVERIFY2(second.generation->prompt_tokens > plain_prompt + 8,
             qPrintable(QStringLiteral("%1 vs %2").arg(second.generation->prompt_tokens).arg(plain_prompt)));

    // Save as defaults: the settings file has them.
    QTest::mouseClick(child<QPushButton>(panel, "saveDefaultsButton"), Qt::LeftButton);
    auto loaded = hearth::settings::load_settings(options.settings_path.toStdString());
    QVERIFY(loaded.ok());
    QCOMPARE(loaded->settings.max_tokens, 4);
    QVERIFY(loaded->settings.system_prompt.find("counting assistant") != std::string::npos);
  }

 private:
  // Sends `text` in the window's open chat and returns the answer as stored.
  ChatRow sendAndRead(MainWindow* window, const QString& text) {
    auto* c = window->controller();
    QSignalSpy finished(c, &ChatController::answerFinished);
    QTest::keyClicks(child<QPlainTextEdit>(window, "inputBox"), text);
    QTest::keyClick(child<QPlainTextEdit>(window, "inputBox"), Qt::Key_Return);
    [&] { QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, kTimeoutMs); }();
    std::optional<ConversationPath> path;
    const store::Id conv = c->currentConversation();
    window->storage()->run(
        this, QStringLiteral("reading back"), [conv](store::Store& s) { return load_path(s, conv); },
        [&path](ConversationPath p) { path = std::move(p); });
    [&] { QTRY_VERIFY(path.has_value()); }();
    return path && !path->rows.empty() ? path->rows.back() : ChatRow{};
  }
};

HEARTH_APP_TEST_MAIN(GenerationPanelTest)
#include "generation_panel_test.moc"
