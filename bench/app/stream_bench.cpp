// A 4,096-token answer streamed at engine speed through the app's chat (the
// ChatController, ChatModel and ChatView with its message widgets) on the
// offscreen platform, from a PacedBackend that emits tokens at a fixed rate
// and batches them as the EngineWorker does. Reports:
// - delivered tok/s: tokens over the time from the source's first token to
//   the UI having shown the last one, against the source's own rate;
// - the UI thread's stalls: wall and CPU time of each top-level event it
//   handles (measured in QApplication::notify), p50 / p99 / max.
// Usage: hearth-app-stream-bench [--tokens N] [--rate TOKENS_PER_S]
#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTemporaryDir>
#include <QThread>
#include <QVBoxLayout>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>

#include "app/batching_sink.h"
#include "app/chat_controller.h"
#include "app/chat_model.h"
#include "app/chat_view.h"
#include "app/message_widget.h"
#include "app/storage_service.h"
#include "long_answer.h"
#include "paced_backend.h"
#include "test_env.h"

using namespace hearth::app;

namespace {

double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// Wall and CPU time of every outermost event delivered on the UI thread.
class TimingApplication : public QApplication {
 public:
  using QApplication::QApplication;
  bool notify(QObject* receiver, QEvent* event) override {
    if (depth_ > 0 || QThread::currentThread() != thread()) return QApplication::notify(receiver, event);
    ++depth_;
    const double cpu = thread_cpu_ms();
    clock_.start();
    const bool handled = QApplication::notify(receiver, event);
    if (recording) {
      wall_ms.push_back(static_cast<double>(clock_.nsecsElapsed()) / 1e6);
      cpu_ms.push_back(thread_cpu_ms() - cpu);
      if (wall_ms.back() > 8.0) {
        const QString key = QStringLiteral("%1 event %2")
                                .arg(QString::fromLatin1(receiver->metaObject()->className()))
                                .arg(static_cast<int>(event->type()));
        slow[key] += 1;
      }
    }
    --depth_;
    return handled;
  }
  bool recording = false;
  std::vector<double> wall_ms, cpu_ms;
  std::map<QString, int> slow;  // events over 8 ms, by receiver class and event type

 private:
  int depth_ = 0;
  QElapsedTimer clock_;
};

struct Options {
  int tokens = 4096;
  double rate = 250;  // the CPU engine's decode speed on the default model, about
};

Options parse(const QStringList& args) {
  Options o;
  for (qsizetype i = 1; i + 1 < args.size(); i += 2) {
    if (args[i] == QLatin1String("--tokens")) o.tokens = std::max(1, args[i + 1].toInt());
    if (args[i] == QLatin1String("--rate")) o.rate = std::max(1.0, args[i + 1].toDouble());
  }
  return o;
}

void print_stalls(const char* what, const std::vector<double>& ms) {
  std::printf("  UI thread %s per event: p50 %.3f ms, p99 %.3f ms, max %.3f ms over %zu events\n", what,
              percentile(ms, 0.5), percentile(ms, 0.99), ms.empty() ? 0.0 : *std::max_element(ms.begin(), ms.end()),
              ms.size());
}

}  // namespace

int main(int argc, char** argv) {
  QTemporaryDir dir;
  testing::isolate_environment(dir);
  TimingApplication app(argc, argv);
  const Options options = parse(QCoreApplication::arguments());

  StorageService storage(dir.filePath(QStringLiteral("bench.db")));
  PacedBackend backend(testing::long_answer_tokens(options.tokens), options.rate);
  ChatController controller(&storage, &backend);
  controller.setMaxTokens(options.tokens);
  QWidget window;
  auto* layout = new QVBoxLayout(&window);
  auto* view = new ChatView(controller.chatModel(), &window);
  layout->addWidget(view);
  window.resize(1000, 800);
  window.show();

  int shown_tokens = 0;
  PacedBackend::Clock::time_point last_shown;
  // Connected after the controller: runs once the view has taken the text.
  QObject::connect(&backend, &ChatBackend::tokens, &app, [&](qint64, const QString&, int count) {
    shown_tokens += count;
    last_shown = PacedBackend::Clock::now();
  });
  QEventLoop loop;
  QObject::connect(&controller, &ChatController::generatingChanged, &loop, [&](bool generating) {
    app.recording = generating;
    if (!generating) loop.quit();
  });
  controller.send(QStringLiteral("Tell me a long story about a dragon who learns to cook."));
  loop.exec();

  using seconds = std::chrono::duration<double>;
  const double source_s = seconds(backend.sourceEnd() - backend.sourceStart()).count();
  const double shown_s = seconds(last_shown - backend.sourceStart()).count();
  const double source_rate = options.tokens / source_s;
  const double shown_rate = shown_tokens / shown_s;
  const MessageWidget* answer = view->messageAt(1);
  std::printf("app-stream: %d tokens at %.0f tok/s asked, window %dx%d, Qt %s, platform %s\n", options.tokens,
              options.rate, window.width(), window.height(), qVersion(), qPrintable(QApplication::platformName()));
  std::printf("  source: %.1f tok/s (%.2f s); delivered to the view: %d tokens, %.1f tok/s (%.1f%% of the source)\n",
              source_rate, source_s, shown_tokens, shown_rate, 100.0 * shown_rate / source_rate);
  print_stalls("wall", app.wall_ms);
  print_stalls("CPU", app.cpu_ms);
  for (const auto& [what, count] : app.slow) std::printf("  over 8 ms: %d x %s\n", count, qPrintable(what));
  if (answer) {
    const auto length = controller.chatModel()->index(1).data(ChatModel::kTextRole).toString().size();
    std::printf(
        "  characters re-rendered: %lld for an answer of %lld (%.2fx)\n",
        static_cast<long long>(answer->renderedCharacters()), static_cast<long long>(length),
        static_cast<double>(answer->renderedCharacters()) / static_cast<double>(std::max<qsizetype>(1, length)));
  }
  storage.waitForIdle();
  return shown_tokens == options.tokens ? 0 : 1;
}
