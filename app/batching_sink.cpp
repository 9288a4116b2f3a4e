#include "app/batching_sink.h"

#include <algorithm>
#include <utility>

#include "engine/metrics/rolling_window.h"

namespace hearth::app {

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return metrics::nearest_rank(values, std::clamp(q, 0.0, 1.0));  // the engine's own rule
}

BatchingSink::BatchingSink(std::function<void()> on_finish_wake) : wake_(std::move(on_finish_wake)) {}

void BatchingSink::on_text(const TextEvent& event) {
  std::lock_guard lock(mutex_);
  pending_ += event.text;
  const auto n = static_cast<int>(event.token_ids.size());
  pending_tokens_ += n;
}

void BatchingSink::on_finish(const FinishEvent& event) {
  {
    std::lock_guard lock(mutex_);
    finish_ = event;
  }
  if (wake_) wake_();
}

BatchingSink::Drained BatchingSink::drain() {
  std::lock_guard lock(mutex_);
  Drained out;
  out.text = std::exchange(pending_, {});
  out.tokens = std::exchange(pending_tokens_, 0);
  if (finish_) out.finish = std::exchange(finish_, std::nullopt);
  return out;
}

}  // namespace hearth::app
