#include "conversation/run_turn.h"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>

namespace hearth::conversation {
namespace {

// Queues the engine thread's events for the driver thread.
class QueueSink final : public Sink {
 public:
  void on_text(const TextEvent& event) override {
    std::lock_guard lock(mutex_);
    pending_ += event.text;
    cv_.notify_all();
  }
  void on_finish(const FinishEvent& event) override {
    std::lock_guard lock(mutex_);
    finish_ = event;
    cv_.notify_all();
  }
  // Waits until text or the finish is there, or `timeout` passed.
  void wait(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, timeout, [this] { return !pending_.empty() || finish_.has_value(); });
  }
  std::string take_text() {
    std::lock_guard lock(mutex_);
    return std::exchange(pending_, std::string());
  }
  // The finish event once every text before it was taken.
  std::optional<FinishEvent> finished() {
    std::lock_guard lock(mutex_);
    return pending_.empty() ? finish_ : std::nullopt;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::string pending_;
  std::optional<FinishEvent> finish_;
};

AnswerEnd end_of(const FinishEvent& f) {
  AnswerEnd end;
  end.reason = f.reason;
  end.usage = f.usage;
  if (f.error) end.error = f.error->describe();
  return end;
}

}  // namespace

std::int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::int64_t pages_total = 0, pages_resident = 0;
  if (!(statm >> pages_total >> pages_resident)) return 0;
  return pages_resident * static_cast<std::int64_t>(sysconf(_SC_PAGESIZE));
}

store::StoreResult<TurnResult> run_turn(store::Store& store, Engine& engine, PreparedTurn turn,
                                        const ModelIdentity& model, const RunOptions& options) {
  using Steady = std::chrono::steady_clock;
  const auto interval = std::chrono::milliseconds(options.save_interval_ms);
  auto sink = std::make_shared<QueueSink>();
  AnswerRecorder recorder(turn, model, now_ms());
  const RequestId id = engine.submit(turn.request(), sink);
  auto last_save = Steady::now();
  std::optional<FinishEvent> finish;
  std::optional<store::StoreError> failed;
  while (!(finish = sink->finished())) {
    sink->wait(interval);
    const std::string text = sink->take_text();
    if (!text.empty()) {
      recorder.add(text);
      if (options.on_text) options.on_text(text);
    }
    if (failed || !recorder.has_unsaved() || Steady::now() - last_save < interval) continue;
    if (auto saved = store.append_streaming(turn.answer_id, recorder.take_unsaved()); !saved) {
      failed = std::move(saved).error();
      engine.cancel(id);  // nothing more can be kept: stop spending compute on it
      continue;
    }
    last_save = Steady::now();
    if (options.on_saved) options.on_saved(recorder);
  }
  const AnswerEnd end = end_of(*finish);
  store::FinishMessage final_write = recorder.finish(end, now_ms(), resident_bytes());
  if (failed) {
    final_write.state = store::MessageState::kInterrupted;  // best effort: the next open would mark it so anyway
    (void)store.finish_message(turn.answer_id, final_write);
    return *failed;
  }
  STORE_TRY(store.finish_message(turn.answer_id, final_write));
  TurnResult result;
  result.turn = std::move(turn);
  result.text = recorder.text();
  result.generation = std::move(*final_write.generation);
  result.reason = end.reason;
  result.error = end.error;
  return result;
}

}  // namespace hearth::conversation
