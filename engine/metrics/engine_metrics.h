// The engine's live measurements. The engine thread records each step and
// each token's latency, then publishes a snapshot once per step; stats() on
// any thread copies that snapshot under a mutex (cheap: no computation).
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

#include "engine/kv/kv_cache_manager.h"
#include "engine/metrics/rolling_window.h"
#include "hearth/metrics.h"

namespace hearth::metrics {

struct StepRecord {
  Clock::time_point start, end;     // the whole step
  std::int32_t prefill_tokens = 0;  // prompt (and recompute) tokens computed
  std::int32_t decode_tokens = 0;   // generated tokens sampled
  double schedule_ms = 0, forward_ms = 0, sample_ms = 0;
  std::span<const double> layer_ms;  // [n_layer] of the forward, when the model timed it (Model::last_layer_ms)
};

struct Gauges {
  std::int32_t waiting = 0;
  std::int32_t running = 0;
  kv::KvCacheStats kv;
  std::int64_t preemptions = 0;
  MemoryByCategory memory;
};

struct MetricsOptions {
  std::size_t latency_samples = 1024;  // TTFT and inter-token windows
  std::size_t step_samples = 64;       // phase-time means
  Clock::duration rate_window = std::chrono::seconds(3);
};

class EngineMetrics {
 public:
  explicit EngineMetrics(const MetricsOptions& options = {});

  // Engine thread only.
  void record_step(const StepRecord& step);
  void record_ttft(double ms) { ttft_.add(ms); }
  void record_inter_token(double ms) { inter_token_.add(ms); }
  void record_finished() { ++finished_; }
  void publish(const Gauges& gauges);

  // Any thread.
  EngineStats snapshot() const;

 private:
  SampleWindow ttft_, inter_token_;
  SampleWindow schedule_ms_, forward_ms_, sample_ms_;
  // One window per layer, over the recent steps that came with layer times
  // (every step on the CPU; CUDA times one step in several): step_samples each.
  std::vector<SampleWindow> layer_ms_;
  SampleWindow forward_timed_ms_;  // forward_ms of those steps
  std::size_t step_samples_;
  RateWindow prefill_rate_, decode_rate_;
  std::int64_t steps_ = 0;
  std::int64_t finished_ = 0;

  mutable std::mutex mu_;
  EngineStats snapshot_;  // guarded by mu_
};

}  // namespace hearth::metrics
