// Renders the app's main states to PNG for the docs: empty (model loaded, no
// conversation), chatting, performance dock open, dark theme. Run under a real
// X server (scripts/screenshots.sh uses xvfb-run). Usage: hearth_screenshots OUT_DIR
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QTemporaryDir>

#include <cstdio>

#include "app/chat_controller.h"
#include "app/engine_bridge.h"
#include "app/main_window.h"
#include "app/perf_dock.h"
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
  return ok ? 0 : 1;
}
