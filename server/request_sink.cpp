#include "server/request_sink.h"

namespace hearth::server {

void QueueSink::on_text(const TextEvent& event) {
  {
    std::lock_guard lock(mu_);
    events_.emplace_back(event);
  }
  cv_.notify_one();
}

void QueueSink::on_finish(const FinishEvent& event) {
  {
    std::lock_guard lock(mu_);
    events_.emplace_back(event);
  }
  cv_.notify_one();
}

std::optional<SinkEvent> QueueSink::next(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  if (!cv_.wait_for(lock, timeout, [this] { return !events_.empty(); })) return std::nullopt;
  SinkEvent event = std::move(events_.front());
  events_.pop_front();
  return event;
}

}  // namespace hearth::server
