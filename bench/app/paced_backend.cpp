#include "paced_backend.h"

#include <QTimer>

#include "app/batching_sink.h"
#include "app/engine_worker.h"

namespace hearth::app {

PacedBackend::PacedBackend(std::vector<QString> pieces, double tokens_per_s)
    : pieces_(std::move(pieces)), rate_(tokens_per_s) {
  LoadedModel m;
  m.path = QStringLiteral("/bench/paced.gguf");
  m.name = QStringLiteral("Paced source");
  m.device = QStringLiteral("cpu");
  m.context_length = 8192;
  model_ = m;
  drainer_ = new QObject;
  drainer_->moveToThread(&drain_thread_);
  connect(&drain_thread_, &QThread::finished, drainer_, &QObject::deleteLater);
  drain_thread_.start();
}

PacedBackend::~PacedBackend() {
  cancelled_ = true;
  if (producer_.joinable()) producer_.join();
  drain_thread_.quit();
  drain_thread_.wait();
}

void PacedBackend::generate(const GenerationRequest& request) {
  if (producer_.joinable()) producer_.join();
  cancelled_ = false;
  const qint64 tag = request.tag;
  auto sink = std::make_shared<BatchingSink>(nullptr);
  // The drain timer, on the drain thread: the EngineWorker's flush() loop.
  QMetaObject::invokeMethod(drainer_, [this, sink, tag] {
    auto* timer = new QTimer(drainer_);
    timer->setInterval(EngineWorker::kFlushIntervalMs);
    connect(timer, &QTimer::timeout, drainer_, [this, sink, tag, timer] {
      auto drained = sink->drain();
      if (!drained.text.empty()) emit tokens(tag, QString::fromStdString(drained.text), drained.tokens);
      if (!drained.finish) return;
      GenerationDone done;
      done.tag = tag;
      done.reason = drained.finish->reason;
      done.usage = drained.finish->usage;
      emit finished(done);
      timer->deleteLater();
    });
    timer->start();
  });
  producer_ = std::thread([this, sink] { produce(sink); });
}

void PacedBackend::cancel(qint64) {
  cancelled_ = true;
}

// Pieces leave at the given rate on a fixed schedule (not "sleep after each"),
// so the source's speed does not depend on how the UI keeps up.
void PacedBackend::produce(std::shared_ptr<BatchingSink> sink) {
  const auto interval = std::chrono::duration<double>(1.0 / rate_);
  source_start_ = Clock::now();
  int sent = 0;
  for (const QString& piece : pieces_) {
    if (cancelled_) break;
    std::this_thread::sleep_until(source_start_ + std::chrono::duration_cast<Clock::duration>(interval * sent));
    TextEvent event;
    event.text = piece.toStdString();
    event.token_ids = {sent};
    sink->on_text(event);
    ++sent;
  }
  source_end_ = Clock::now();
  FinishEvent finish;
  finish.reason = cancelled_ ? FinishReason::kCancelled : FinishReason::kLength;
  finish.usage.generated_tokens = sent;
  finish.usage.decode_tps = sent / std::chrono::duration<double>(source_end_ - source_start_).count();
  sink->on_finish(finish);
}

}  // namespace hearth::app
