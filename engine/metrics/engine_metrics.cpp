#include "engine/metrics/engine_metrics.h"

namespace hearth::metrics {

EngineMetrics::EngineMetrics(const MetricsOptions& options)
    : ttft_(options.latency_samples),
      inter_token_(options.latency_samples),
      schedule_ms_(options.step_samples),
      forward_ms_(options.step_samples),
      sample_ms_(options.step_samples),
      forward_timed_ms_(options.step_samples),
      step_samples_(options.step_samples),
      prefill_rate_(options.rate_window),
      decode_rate_(options.rate_window) {}

void EngineMetrics::record_step(const StepRecord& step) {
  ++steps_;
  schedule_ms_.add(step.schedule_ms);
  forward_ms_.add(step.forward_ms);
  sample_ms_.add(step.sample_ms);
  if (!step.layer_ms.empty()) {
    if (layer_ms_.size() != step.layer_ms.size()) layer_ms_.assign(step.layer_ms.size(), SampleWindow(step_samples_));
    for (std::size_t l = 0; l < layer_ms_.size(); ++l) layer_ms_[l].add(step.layer_ms[l]);
    forward_timed_ms_.add(step.forward_ms);
  }
  prefill_rate_.add(step.start, step.end, step.prefill_tokens);
  decode_rate_.add(step.start, step.end, step.decode_tokens);
}

void EngineMetrics::publish(const Gauges& gauges) {
  EngineStats s;
  s.decode_tps = decode_rate_.rate();
  s.prefill_tps = prefill_rate_.rate();
  s.ttft = ttft_.summary();
  s.inter_token = inter_token_.summary();
  s.waiting = gauges.waiting;
  s.running = gauges.running;
  s.kv_blocks_total = gauges.kv.blocks.total;
  s.kv_blocks_used = gauges.kv.blocks.used;
  s.kv_blocks_cached = gauges.kv.blocks.cached;
  s.kv_blocks_free = gauges.kv.blocks.free;
  s.prefix_hit_rate = gauges.kv.prefix.hit_rate();
  s.prefix_hit_tokens = gauges.kv.prefix.hit_tokens;
  s.prefix_evictions = gauges.kv.prefix.evictions;
  s.preemptions = gauges.preemptions;
  s.memory = gauges.memory;
  s.step.schedule = schedule_ms_.mean();
  s.step.forward = forward_ms_.mean();
  s.step.sample = sample_ms_.mean();
  s.step.forward_by_layer.reserve(layer_ms_.size());
  for (const SampleWindow& w : layer_ms_) s.step.forward_by_layer.push_back(w.mean());
  s.step.forward_timed = forward_timed_ms_.mean();
  s.steps = steps_;
  s.requests_finished = finished_;
  std::lock_guard<std::mutex> lock(mu_);
  snapshot_ = std::move(s);
}

EngineStats EngineMetrics::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return snapshot_;
}

}  // namespace hearth::metrics
