// A ChatBackend that answers like the engine does, without a model: a
// producer thread hands token pieces to a BatchingSink at a fixed rate (the
// engine's decode speed), and a drain thread empties it every
// EngineWorker::kFlushIntervalMs and signals the UI, as the EngineWorker does.
#pragma once

#include <QThread>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "app/chat_backend.h"

namespace hearth::app {

class BatchingSink;

class PacedBackend final : public ChatBackend {
  Q_OBJECT

 public:
  using Clock = std::chrono::steady_clock;
  PacedBackend(std::vector<QString> pieces, double tokens_per_s);
  ~PacedBackend() override;

  const std::optional<LoadedModel>& model() const override { return model_; }
  void generate(const GenerationRequest& request) override;
  void cancel(qint64 tag) override;

  // When the producer handed out its first and last piece (valid after finished()).
  Clock::time_point sourceStart() const { return source_start_; }
  Clock::time_point sourceEnd() const { return source_end_; }

 private:
  void produce(std::shared_ptr<BatchingSink> sink);

  std::vector<QString> pieces_;
  double rate_;
  std::optional<LoadedModel> model_;
  QThread drain_thread_;
  QObject* drainer_ = nullptr;  // lives on drain_thread_
  std::thread producer_;
  std::atomic<bool> cancelled_{false};
  Clock::time_point source_start_, source_end_;
};

}  // namespace hearth::app
