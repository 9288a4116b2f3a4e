// The Sink handed to the engine for one answer. The engine thread appends text
// under a mutex; the worker thread drains it at ~30 Hz, so the UI receives a
// bounded number of updates however fast tokens come.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "hearth/engine.h"

namespace hearth::app {

// The q-quantile (0..1) of `values` by nearest rank; 0 for an empty input.
double percentile(std::vector<double> values, double q);

class BatchingSink final : public Sink {
 public:
  // `on_finish_wake` runs on the engine thread after the finish event is
  // stored, so the owner can drain at once instead of at the next tick.
  explicit BatchingSink(std::function<void()> on_finish_wake);

  void on_text(const TextEvent& event) override;
  void on_finish(const FinishEvent& event) override;

  struct Drained {
    std::string text;  // complete UTF-8 pieces since the last drain
    int tokens = 0;
    std::optional<FinishEvent> finish;  // once, after the last text (its usage has the ITL percentiles)
  };
  Drained drain();

 private:
  std::function<void()> wake_;
  std::mutex mutex_;
  std::string pending_;
  int pending_tokens_ = 0;
  std::optional<FinishEvent> finish_;
};

}  // namespace hearth::app
