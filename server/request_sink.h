// The bridge from the engine thread to an HTTP handler thread: a Sink that
// queues the request's events (the engine's callbacks must return at once)
// and lets the handler take them with a timeout, so that it can look at its
// client's socket and the server's shutdown flag while it waits.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <variant>

#include "hearth/engine.h"

namespace hearth::server {

using SinkEvent = std::variant<TextEvent, FinishEvent>;

class QueueSink final : public Sink {
 public:
  void on_text(const TextEvent& event) override;
  void on_finish(const FinishEvent& event) override;
  // The next event, or nullopt when none came within `timeout`.
  std::optional<SinkEvent> next(std::chrono::milliseconds timeout);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<SinkEvent> events_;
};

}  // namespace hearth::server
