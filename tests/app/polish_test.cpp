// The day-one polish of the main window on the offscreen platform (issue 17):
// generation settings kept per conversation in the store (and the panel's
// system prompt recorded with the answer), the token counter, the crash
// banner's link to each interrupted answer and the context count after a
// crash, then the looks: highlighted code, styled tables, the readable
// message width, the Edit box's height, the narrow Generation dock, the
// conversation list's dates and groups, and the performance dock's axis,
// colours and figures. Widgets by objectName, waits by QTRY_*.
#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QDockWidget>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QListView>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

#include <cmath>
#include <cstdlib>

#include "app/banner.h"
#include "app/chat_controller.h"
#include "app/chat_model.h"
#include "app/chat_rows.h"
#include "app/chat_view.h"
#include "app/conversation_delegate.h"
#include "app/conversation_list_model.h"
#include "app/engine_bridge.h"
#include "app/generation_panel.h"
#include "app/main_window.h"
#include "app/message_widget.h"
#include "app/perf_dock.h"
#include "app/storage_service.h"
#include "app/token_counter.h"
#include "settings/settings.h"
#include "store/store.h"
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

int contextUsed(MainWindow* window) {
  // "Context 1,234 / 4,096"
  const QString text = child<QLabel>(window, "contextLabel")->text();
  QString digits;
  for (const QChar c : text.section(QLatin1Char('/'), 0, 0)) {
    if (c.isDigit()) digits += c;
  }
  return digits.isEmpty() ? -1 : digits.toInt();
}

}  // namespace

class PolishTest : public QObject {
  Q_OBJECT

 private slots:
  void init() { dir_ = std::make_unique<QTemporaryDir>(); }
  void cleanup() {
    window_.reset();
    dir_.reset();
  }

  // A conversation's own settings reach the store, come back after a restart,
  // and the system prompt of the panel is what the answer's record holds.
  void settingsPerConversationSurviveARestart() {
    makeWindow(true);
    QTRY_VERIFY_WITH_TIMEOUT(window_->engine()->model().has_value(), kTimeoutMs);
    auto* panel = window_->generationPanel();
    const QString prompt = QStringLiteral("You answer in one short sentence.");
    child<QSpinBox>(panel, "maxTokensSpin")->setValue(5);
    child<QPlainTextEdit>(panel, "systemPromptEdit")->setPlainText(prompt);

    // The token counter follows the typed message (the model's tokenizer).
    auto* input = child<QPlainTextEdit>(window_.get(), "inputBox");
    QTest::keyClicks(input, QStringLiteral("Name a colour."));
    auto* counter = window_->findChild<TokenCounter*>();
    QVERIFY(counter);
    QTRY_VERIFY(counter->tokens() > 0);
    const int short_count = counter->tokens();
    QVERIFY2(counter->text().contains(QString::number(short_count)), qPrintable(counter->text()));

    QSignalSpy finished(window_->controller(), &ChatController::answerFinished);
    QTest::keyClick(input, Qt::Key_Return);
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, kTimeoutMs);
    QTRY_VERIFY(counter->text().isEmpty());  // the box was emptied
    const qint64 tuned = window_->controller()->currentConversation();
    QVERIFY(tuned > 0);
    const ChatRow answer = lastRow(tuned);
    QVERIFY(answer.generation.has_value());
    QCOMPARE(answer.generation->system_text, prompt.toStdString());  // no prompt version pinned: the panel's
    QVERIFY(!answer.generation->prompt_version_id.has_value());
    QCOMPARE(answer.generation->max_tokens, std::int64_t{5});
    // The counted prompt is the one the engine took: the context label agrees with the record.
    QTRY_COMPARE(contextUsed(window_.get()),
                 static_cast<int>(answer.generation->prompt_tokens + answer.generation->generated_tokens));
    // In the store, with the conversation (after the save delay).
    QTRY_VERIFY(storedSettings(tuned).has_value());
    QCOMPARE(storedSettings(tuned)->max_tokens, std::int64_t{5});
    QCOMPARE(storedSettings(tuned)->system_prompt, prompt.toStdString());

    // A new chat starts from the defaults; its first send keeps them (no row).
    window_->controller()->newConversation();
    QTRY_COMPARE(child<QSpinBox>(panel, "maxTokensSpin")->value(), hearth::settings::Settings{}.max_tokens);
    QVERIFY(child<QPlainTextEdit>(panel, "systemPromptEdit")->toPlainText().isEmpty());
    window_->controller()->openConversation(tuned);
    QTRY_COMPARE(child<QSpinBox>(panel, "maxTokensSpin")->value(), 5);

    // Restart (the last conversation reopens): its settings come back from the store.
    window_->close();
    window_.reset();
    makeWindow(false);
    QTRY_COMPARE(window_->controller()->currentConversation(), tuned);
    panel = window_->generationPanel();
    QTRY_COMPARE(child<QSpinBox>(panel, "maxTokensSpin")->value(), 5);
    QCOMPARE(child<QPlainTextEdit>(panel, "systemPromptEdit")->toPlainText(), prompt);
    QCOMPARE(window_->controller()->systemPrompt(), prompt);  // and in use, not only shown

    // Reset: back to the defaults, and the row is gone.
    QTest::mouseClick(child<QPushButton>(panel, "resetGenerationButton"), Qt::LeftButton);
    QCOMPARE(child<QSpinBox>(panel, "maxTokensSpin")->value(), hearth::settings::Settings{}.max_tokens);
    QTRY_VERIFY(!storedSettings(tuned).has_value());
  }

  // After a crash: the banner links each interrupted answer; a click opens it
  // on its branch, scrolls to it and highlights it; the context count is the
  // conversation's, counted by the model, not 0.
  void crashBannerLinksEachInterruptedAnswer() {
    store::Id first = 0, second = 0, other = 0;
    {
      auto s = store::Store::open({.path = dir_->filePath(QStringLiteral("hearth.db")).toStdString()});
      QVERIFY(s.ok());
      store::Store& st = **s;
      const store::Id c1 = *st.create_conversation("Long talk");
      std::optional<store::Id> parent;
      for (int i = 0; i < 12; ++i) {  // enough to scroll
        const store::Id u = *st.add_message({c1, parent, store::Role::kUser, "Question " + std::to_string(i)});
        const store::Id a = *st.begin_answer(c1, u);
        std::string text;
        for (int k = 0; k < 30; ++k) text += "The answer is here. ";  // ~150 tokens
        QVERIFY(st.finish_message(a, {.tail = text + std::to_string(i)}).ok());
        parent = a;
      }
      const store::Id u = *st.add_message({c1, parent, store::Role::kUser, "And the last one?"});
      first = *st.begin_answer(c1, u);
      QVERIFY(st.append_streaming(first, "The last answer was cut").ok());
      const store::Id c2 = *st.create_conversation("Other chat");
      const store::Id u2 = *st.add_message({c2, std::nullopt, store::Role::kUser, "Hi"});
      second = *st.begin_answer(c2, u2);
      QVERIFY(st.append_streaming(second, "Hel").ok());
      other = c2;
      // Both stay 'streaming': the process "dies" here.
    }
    makeWindow(true);
    auto* banner = window_->banner();
    QTRY_VERIFY(banner->isVisible() && banner->text().contains(QStringLiteral("href")));
    const QString html = banner->text();
    QVERIFY2(html.contains(QStringLiteral("href=\"%1\"").arg(first)), qPrintable(html));
    QVERIFY2(html.contains(QStringLiteral("href=\"%1\"").arg(second)), qPrintable(html));
    QVERIFY2(html.contains(QStringLiteral("Long talk")) && html.contains(QStringLiteral("Other chat")),
             qPrintable(html));

    auto* label = child<QLabel>(banner, "bannerText");
    emit label->linkActivated(QString::number(second));
    QTRY_COMPARE(window_->controller()->currentConversation(), qint64{other});
    emit label->linkActivated(QString::number(first));
    QTRY_VERIFY(window_->controller()->currentConversation() != other);
    auto* view = child<ChatView>(window_.get(), "chatView");
    QTRY_COMPARE(view->highlightedMessage(), qint64{first});
    MessageWidget* target = nullptr;
    for (int r = 0; r < view->messageCount(); ++r) {
      if (view->messageAt(r)->messageId() == first) target = view->messageAt(r);
    }
    QVERIFY(target);
    QVERIFY(target->property("highlighted").toBool());
    QTRY_VERIFY(!target->visibleRegion().isEmpty());  // scrolled to
    QVERIFY(banner->isVisible());                     // the other link stays offered

    // The context: counted once the model is loaded (no record for the interrupted answer).
    QTRY_VERIFY_WITH_TIMEOUT(window_->engine()->model().has_value(), kTimeoutMs);
    QTRY_VERIFY2(contextUsed(window_.get()) > 1000, qPrintable(child<QLabel>(window_.get(), "contextLabel")->text()));
  }

  void codeTablesWidthAndEditBox() {
    makeWindow(false);
    window_->resize(2200, 900);
    ConversationPath path;
    path.conversation_id = 7;
    ChatRow user;
    user.message = {1, 7, std::nullopt, store::Role::kUser, "Show me", store::MessageState::kComplete, 1, 1};
    ChatRow answer;
    answer.message = {2,
                      7,
                      1,
                      store::Role::kAssistant,
                      "Code:\n```python\ndef f(x):\n    return x  # same\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
                      "> quoted words\n",
                      store::MessageState::kComplete,
                      2,
                      2};
    path.rows = {user, answer};
    window_->controller()->chatModel()->setPath(path);
    auto* view = child<ChatView>(window_.get(), "chatView");
    QTRY_COMPARE(view->messageCount(), 2);
    MessageWidget* shown = view->messageAt(1);
    // Highlighted code: rich text with the keyword coloured.
    auto* code = shown->findChild<QLabel*>(QStringLiteral("codeText"));
    QVERIFY(code);
    QCOMPARE(code->textFormat(), Qt::RichText);
    QVERIFY2(code->text().contains(QStringLiteral(">def</span>")), qPrintable(code->text()));
    // Tables and quotes: one collapsed border, padded cells.
    bool table = false, quote = false;
    for (QLabel* prose : shown->findChildren<QLabel*>(QStringLiteral("proseText"))) {
      if (prose->text().contains(QStringLiteral("<table"))) {
        table = true;
        QCOMPARE(prose->textFormat(), Qt::RichText);
        QVERIFY2(prose->text().contains(QStringLiteral("border-collapse:collapse")), qPrintable(prose->text()));
        QVERIFY2(prose->text().contains(QStringLiteral("cellspacing=\"0\"")), qPrintable(prose->text()));
      }
      if (prose->text().contains(QStringLiteral("quoted words"))) quote = prose->textFormat() == Qt::RichText;
    }
    QVERIFY(table);
    QVERIFY(quote);
    // A wide window: messages at most kMaxMessageWidth, centred.
    QTRY_VERIFY(shown->width() > 0 && shown->width() <= ChatView::kMaxMessageWidth);
    QTRY_VERIFY2(std::abs(shown->geometry().center().x() - view->widget()->width() / 2) < 24,
                 qPrintable(QStringLiteral("message at %1 + %2 in %3 (viewport %4)")
                                .arg(shown->x())
                                .arg(shown->width())
                                .arg(view->widget()->width())
                                .arg(view->viewport()->width())));
    window_->resize(900, 700);  // a narrow one: the full width, less the 16-px margins
    QTRY_VERIFY2(view->viewport()->width() < ChatView::kMaxMessageWidth &&
                     shown->width() >= view->viewport()->width() - 2 * 16 - 2,
                 qPrintable(QStringLiteral("%1 in %2").arg(shown->width()).arg(view->viewport()->width())));

    // The Edit box fits its text.
    QTest::mouseClick(view->messageAt(0)->findChild<QToolButton*>(QStringLiteral("editButton")), Qt::LeftButton);
    auto* edit = view->messageAt(0)->findChild<QPlainTextEdit*>(QStringLiteral("editText"));
    QVERIFY(edit);
    QTRY_VERIFY(edit->isVisible());
    const int one_line = edit->height();
    QVERIFY2(one_line < 5 * edit->fontMetrics().lineSpacing(), qPrintable(QString::number(one_line)));
    edit->setPlainText(QStringLiteral("1\n2\n3\n4\n5\n6\n7\n8"));
    QTRY_VERIFY(edit->height() > one_line + 4 * edit->fontMetrics().lineSpacing());
  }

  // The Generation dock in a narrow column: every field inside the panel's width.
  void generationPanelFitsANarrowDock() {
    makeWindow(false);
    window_->resize(1024, 640);
    auto* dock = child<QDockWidget>(window_.get(), "generationDock");
    dock->show();
    dock->raise();
    window_->resizeDocks({dock}, {200}, Qt::Horizontal);
    auto* panel = window_->generationPanel();
    auto* scroll = qobject_cast<QScrollArea*>(dock->widget());
    QVERIFY(scroll);
    QTRY_VERIFY(dock->width() <= 260);
    QTRY_VERIFY2(
        panel->width() <= scroll->viewport()->width(),
        qPrintable(QStringLiteral("panel %1, viewport %2").arg(panel->width()).arg(scroll->viewport()->width())));
    for (const char* name : {"temperatureSpin", "repeatPenaltySpin", "maxTokensSpin", "seedEdit", "applyContextButton",
                             "systemPromptEdit", "presetCombo"}) {
      auto* w = child<QWidget>(panel, name);
      const QRect r(w->mapTo(panel, QPoint(0, 0)), w->size());
      QVERIFY2(r.right() <= panel->width() && r.left() >= 0, name);
    }
  }

  // Same titles show their dates; rows are grouped by the date of their last activity.
  void conversationListDatesAndGroups() {
    ConversationListModel model;
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    const qint64 day = 24LL * 3600 * 1000;
    std::vector<store::Conversation> list(4);
    list[0].id = 4, list[0].title = "Question", list[0].updated_ms = now;
    list[1].id = 3, list[1].title = "Question", list[1].updated_ms = now - day;
    list[2].id = 2, list[2].title = "Unique", list[2].updated_ms = now - 3 * day;
    list[3].id = 1, list[3].title = "Old", list[3].updated_ms = now - 400 * day;
    model.setConversations(list);
    const QString a = model.index(0).data().toString(), b = model.index(1).data().toString();
    QVERIFY2(a.startsWith(QStringLiteral("Question \u2014 ")) && b.startsWith(QStringLiteral("Question \u2014 ")),
             qPrintable(a + QStringLiteral(" / ") + b));
    QVERIFY(a != b);
    QCOMPARE(model.index(2).data().toString(), QStringLiteral("Unique"));
    model.rename(3, QStringLiteral("Renamed"));  // no longer a duplicate: no date
    QCOMPARE(model.index(0).data().toString(), QStringLiteral("Question"));
    const QDateTime when = QDateTime::currentDateTime();
    QCOMPARE(date_group(now, when), QStringLiteral("Today"));
    QCOMPARE(date_group(now - day, when), QStringLiteral("Yesterday"));
    QCOMPARE(date_group(now - 3 * day, when), QStringLiteral("Previous 7 days"));
    QCOMPARE(date_group(now - 20 * day, when), QStringLiteral("Previous 30 days"));
    QVERIFY(date_group(now - 400 * day, when).contains(QString::number(when.addDays(-400).date().year())));
    // Headers above the first row of each group only.
    QCOMPARE(ConversationDelegate::headerOf(model.index(0)), QStringLiteral("Today"));
    QCOMPARE(ConversationDelegate::headerOf(model.index(1)), QStringLiteral("Yesterday"));
    list[1].updated_ms = now - 1000;
    model.setConversations(list);
    QCOMPARE(ConversationDelegate::headerOf(model.index(1)), QString());
  }

  void performanceDockAxisColoursAndFigures() {
    // Integer ticks at 5 round steps from 0.
    for (const double y : {0.0, 0.4, 1.0, 3.0, 17.3, 99.0, 230.0, 1234.0}) {
      const double top = nice_axis_top(y);
      const double step = top / (kAxisTicks - 1);
      QVERIFY2(top >= y * 1.15 && step >= 1 && step == std::floor(step), qPrintable(QString::number(y)));
    }
    QCOMPARE(nice_axis_top(0), 4.0);  // idle: 0 1 2 3 4
    QCOMPARE(nice_axis_top(17.3), 20.0);
    makeWindow(false);
    auto* dock = window_->perfDock();
    dock->show();
    const auto colours = [dock] {
      QList<QColor> out;
      for (QChartView* v : dock->findChildren<QChartView*>()) {
        for (QAbstractSeries* s : v->chart()->series()) {
          if (auto* line = qobject_cast<QLineSeries*>(s)) out << line->color();
        }
      }
      return out;
    };
    window_->setTheme(Theme::kLight);
    const QList<QColor> light = colours();
    window_->setTheme(Theme::kDark);
    QCOMPARE(colours(), light);
    QVERIFY(!light.isEmpty());
    QCOMPARE(light.first(), series_color(0));
    // Idle, the figures are the last answer's (its stats line's), not the window's.
    hearth::EngineStats e;
    e.decode_tps = 30.9;
    StatsHistoryModel::Answer last;
    last.decode_tps = 17.3;
    last.generated_tokens = 40;
    const QString idle = PerfDock::summaryText(e, &last);
    QVERIFY2(idle.contains(QStringLiteral("17.3")) && !idle.contains(QStringLiteral("30.9")), qPrintable(idle));
    e.running = 1;
    QVERIFY(PerfDock::summaryText(e, &last).contains(QStringLiteral("30.9")));
  }

 private:
  void makeWindow(bool load_model) {
    MainWindowOptions options;
    options.database_path = dir_->filePath(QStringLiteral("hearth.db"));
    options.settings_path = dir_->filePath(QStringLiteral("settings.json"));
    options.load_model = load_model;
    window_ = std::make_unique<MainWindow>(options);
    window_->resize(1200, 800);
    window_->show();
  }

  std::optional<store::ConversationSettings> storedSettings(qint64 conversation) {
    std::optional<std::optional<store::ConversationSettings>> got;
    window_->storage()->run(
        this, QStringLiteral("reading back"),
        [conversation](store::Store& s) { return s.conversation_settings(conversation); },
        [&got](std::optional<store::ConversationSettings> v) { got = std::move(v); });
    [&] { QTRY_VERIFY(got.has_value()); }();
    return got.value_or(std::nullopt);
  }

  ChatRow lastRow(qint64 conversation) {
    std::optional<ConversationPath> path;
    window_->storage()->run(
        this, QStringLiteral("reading back"), [conversation](store::Store& s) { return load_path(s, conversation); },
        [&path](ConversationPath p) { path = std::move(p); });
    [&] { QTRY_VERIFY(path.has_value()); }();
    return path && !path->rows.empty() ? path->rows.back() : ChatRow{};
  }

  std::unique_ptr<QTemporaryDir> dir_;
  std::unique_ptr<MainWindow> window_;
};

HEARTH_APP_TEST_MAIN(PolishTest)
#include "polish_test.moc"
