// A snapshot of the engine's measurements, for the performance panels, the
// CLI's /stats and the HTTP API. Taken from any thread (Engine::stats()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hearth {

struct LatencySummary {  // milliseconds, over a recent window
  double p50 = 0, p95 = 0, p99 = 0;
  std::int64_t count = 0;
};

struct MemoryByCategory {  // bytes
  std::size_t weights = 0;
  std::size_t kv_pool = 0;
  std::size_t workspace = 0;
  std::size_t device_free = 0;   // GPU only: cudaMemGetInfo; 0 on the CPU
  std::size_t device_total = 0;  // GPU only
};

struct StepPhaseTimes {  // milliseconds, mean over a recent window of steps
  double schedule = 0;
  double forward = 0;
  double sample = 0;
  std::vector<double> forward_by_layer;  // empty when the backend does not time layers
  // The forward mean of the steps that came with layer times: the window
  // forward_by_layer covers (the CPU times every step, CUDA one in several;
  // 0 when no step was timed).
  double forward_timed = 0;
};

struct EngineStats {
  double decode_tps = 0;       // generated tokens per second, rolling window, all requests
  double prefill_tps = 0;      // computed prompt tokens per second, rolling window
  LatencySummary ttft;         // time to first token
  LatencySummary inter_token;  // between consecutive tokens of a request
  std::int32_t waiting = 0;    // queued requests
  std::int32_t running = 0;    // sequences in the running set
  std::int32_t kv_blocks_total = 0;
  std::int32_t kv_blocks_used = 0;    // referenced by a sequence
  std::int32_t kv_blocks_cached = 0;  // unreferenced, still findable by the prefix cache
  std::int32_t kv_blocks_free = 0;
  double prefix_hit_rate = 0;  // hit tokens / queried tokens, since start
  std::int64_t prefix_hit_tokens = 0;
  std::int64_t prefix_evictions = 0;
  std::int64_t preemptions = 0;
  MemoryByCategory memory;
  StepPhaseTimes step;
  std::int64_t steps = 0;
  std::int64_t requests_finished = 0;
};

}  // namespace hearth
