// Renders the app's main states to PNG for the docs: empty (model loaded, no
// conversation), chatting, performance dock open, dark theme, the prompt
// library with a pinned version, the prompt history window, a re-run's compare
// view, the profiler dock. Run under a real
// X server (scripts/screenshots.sh uses xvfb-run). Usage: hearth_screenshots OUT_DIR
#include <QAbstractButton>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QTableView>
#include <QTemporaryDir>

#include <cstdio>

#include "app/chat_controller.h"
#include "app/compare_view.h"
#include "app/engine_bridge.h"
#include "app/history_model.h"
#include "app/history_window.h"
#include "app/main_window.h"
#include "app/perf_dock.h"
#include "app/profiler_dock.h"
#include "app/prompt_library_panel.h"
#include "app/rerun_dialog.h"
#include "test_env.h"

using namespace hearth::app;

namespace {

// Runs the event loop until `done` holds or `timeout_ms` passes.
template <class Pred>
bool wait_for(Pred done, int timeout_ms) {
  QElapsedTimer t;
  t.start();
  while (!done()) {
    if (t.elapsed() > timeout_ms) return false;
    QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
  }
  return true;
}

// Lets layouts, charts and repaints settle for `ms` before a grab.
void settle(int ms) {
  QElapsedTimer t;
  t.start();
  while (t.elapsed() < ms) QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
}

bool save(QWidget& w, const QDir& out, const char* name) {
  const QString path = out.filePath(QString::fromLatin1(name));
  const bool ok = w.grab().save(path);
  std::printf("%s %s\n", ok ? "wrote" : "FAILED", qPrintable(path));
  return ok;
}

bool answer(ChatController* c, const QString& text) {
  c->send(text);
  return wait_for([c] { return c->generating(); }, 5000) && wait_for([c] { return !c->generating(); }, 180000);
}

// Clicks the button named `name` inside `parent`; false when there is none.
bool click(QWidget* parent, const char* name) {
  auto* b = parent->findChild<QAbstractButton*>(QString::fromLatin1(name));
  if (b) b->click();
  if (!b) std::fprintf(stderr, "no button %s\n", name);
  return b != nullptr;
}

// The prompt library with two versions of a prompt, version 2 pinned, and an answer under it.
bool prompt_library(MainWindow& window, const QDir& out) {
  auto* dock = window.findChild<QDockWidget*>(QStringLiteral("promptDock"));
  auto* panel = window.findChild<PromptLibraryPanel*>();
  if (!dock || !panel) return false;
  dock->show();
  dock->raise();
  window.resizeDocks({dock}, {380}, Qt::Horizontal);
  window.controller()->newConversation();
  auto* text = panel->findChild<QPlainTextEdit*>(QStringLiteral("promptText"));
  panel->findChild<QLineEdit*>(QStringLiteral("promptName"))->setText(QStringLiteral("tutor"));
  text->setPlainText(QStringLiteral("You are a patient tutor. Explain step by step."));
  if (!click(panel, "createPrompt") || !wait_for([&] { return panel->selectedVersion() == 1; }, 10000)) return false;
  text->setPlainText(QStringLiteral("You are a patient tutor. Answer in two short sentences."));
  if (!click(panel, "saveVersion") || !wait_for([&] { return panel->selectedVersion() == 2; }, 10000)) return false;
  if (!click(panel, "pinVersion")) return false;
  settle(500);
  bool ok = answer(window.controller(), QStringLiteral("Why is the sky blue?"));
  settle(800);
  return save(window, out, "prompts.png") && ok;
}

// The history window, then a re-run of the newest prompt with version 1 and its compare view.
bool history_and_compare(MainWindow& window, const QDir& out) {
  HistoryWindow* history = window.showHistoryWindow();
  history->resize(1280, 520);
  if (!wait_for([&] { return history->model()->rowCount() >= 4; }, 10000)) return false;
  settle(800);
  bool ok = save(*history, out, "history.png");
  history->table()->selectRow(0);  // newest first: the tutor's question
  history->rerunSelected();
  RerunDialog* dialog = nullptr;
  if (!wait_for([&] { return (dialog = history->findChild<RerunDialog*>()) != nullptr; }, 10000)) return false;
  dialog->findChild<QComboBox*>(QStringLiteral("rerunPrompt"))->setEditText(QStringLiteral("tutor@1"));
  if (!click(dialog, "rerunRun")) return false;
  CompareView* compare = nullptr;
  if (!wait_for([&] { return (compare = history->findChild<CompareView*>()) != nullptr && compare->ready(); },
                180000)) {
    std::fprintf(stderr, "the re-run did not finish\n");
    return false;
  }
  compare->resize(1100, 560);
  settle(800);
  ok = save(*compare, out, "compare.png") && ok;
  history->close();
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  QTemporaryDir data;
  hearth::app::testing::isolate_environment(data);
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("hearth"));
  QApplication::setApplicationName(QStringLiteral("hearth"));
  if (argc < 2) {
    std::fprintf(stderr, "usage: hearth_screenshots OUT_DIR\n");
    return 2;
  }
  QDir out(QString::fromLocal8Bit(argv[1]));
  out.mkpath(QStringLiteral("."));

  MainWindowOptions options;
  options.database_path = data.filePath(QStringLiteral("shots.db"));
  options.max_tokens = 120;
  options.theme = Theme::kLight;
  MainWindow window(options);
  window.resize(1280, 800);
  window.show();
  if (!wait_for([&] { return window.engine()->model().has_value(); }, 120000)) {
    std::fprintf(stderr, "the default model did not load\n");
    return 1;
  }
  auto* c = window.controller();
  // Greedy through the Generation panel ("Deterministic"): the same pictures every run.
  auto* preset = window.findChild<QComboBox*>(QStringLiteral("presetCombo"));
  const int greedy = preset ? preset->findText(QStringLiteral("Deterministic")) : -1;
  if (greedy < 0) {
    std::fprintf(stderr, "no Deterministic preset in the Generation panel\n");
    return 1;
  }
  preset->setCurrentIndex(greedy);
  emit preset->activated(greedy);
  settle(500);
  bool ok = save(window, out, "empty.png");
  ok = answer(c, QStringLiteral("Write a Python function that returns the square of a number.")) && ok;
  ok = answer(c, QStringLiteral("What is the capital of France?")) && ok;
  settle(800);
  ok = save(window, out, "chatting.png") && ok;
  window.perfDock()->show();
  window.perfDock()->raise();                                      // a tab beside Generation
  window.resizeDocks({window.perfDock()}, {430}, Qt::Horizontal);  // the charts need ~400 px
  ok = answer(c, QStringLiteral("Name three colours of the rainbow.")) && ok;
  settle(1500);
  ok = save(window, out, "performance.png") && ok;
  window.setTheme(Theme::kDark);
  settle(800);
  ok = save(window, out, "dark.png") && ok;
  window.setTheme(Theme::kLight);
  ok = prompt_library(window, out) && ok;
  ok = history_and_compare(window, out) && ok;
  window.resize(1400, 880);  // the heat map's columns and the breakdown need the room
  settle(300);
  window.profilerDock()->show();  // profiles while it is open
  window.profilerDock()->raise();
  window.resizeDocks({window.profilerDock()}, {620}, Qt::Horizontal);
  ok = answer(c, QStringLiteral("Name three planets.")) && ok;
  settle(1500);
  ok = save(window, out, "profiler.png") && ok;
  return ok ? 0 : 1;
}
