#include "server/server_metrics.h"

#include <array>
#include <cstdio>

namespace hearth::server {
namespace {

constexpr std::array<std::string_view, 6> kRoutes = {
    "/health", "/metrics", "/v1/models", "/v1/chat/completions", "/v1/completions", "other"};

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

void header(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out.append("# HELP ").append(name).append(" ").append(help).append("\n");
  out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
}

void sample(std::string& out, std::string_view name, std::string_view labels, double value) {
  out.append(name);
  if (!labels.empty()) out.append("{").append(labels).append("}");
  out.append(" ").append(number(value)).append("\n");
}

void metric(std::string& out, std::string_view name, std::string_view type, std::string_view help, double value) {
  header(out, name, type, help);
  sample(out, name, "", value);
}

// The engine's rolling-window percentiles (milliseconds) as gauges in seconds.
void quantiles(std::string& out, std::string_view name, std::string_view help, const LatencySummary& s) {
  header(out, name, "gauge", help);
  sample(out, name, "quantile=\"0.5\"", s.p50 / 1e3);
  sample(out, name, "quantile=\"0.95\"", s.p95 / 1e3);
  sample(out, name, "quantile=\"0.99\"", s.p99 / 1e3);
}

void render_engine(std::string& out, const EngineStats& s) {
  metric(out, "hearth_requests_running", "gauge", "Sequences in the engine's running set.", s.running);
  metric(out, "hearth_requests_waiting", "gauge", "Requests queued in the engine.", s.waiting);
  metric(out, "hearth_prefill_tokens_per_second", "gauge", "Prompt tokens computed per second (rolling window).",
         s.prefill_tps);
  metric(out, "hearth_decode_tokens_per_second", "gauge", "Tokens generated per second, all requests (rolling window).",
         s.decode_tps);
  quantiles(out, "hearth_engine_ttft_seconds", "Engine time to first token, recent window.", s.ttft);
  quantiles(out, "hearth_engine_inter_token_seconds", "Engine inter-token latency, recent window.", s.inter_token);
  header(out, "hearth_kv_blocks", "gauge",
         "KV cache blocks by state (used: held by a sequence; cached: free but "
         "still findable by the prefix cache).");
  sample(out, "hearth_kv_blocks", "state=\"used\"", s.kv_blocks_used);
  sample(out, "hearth_kv_blocks", "state=\"cached\"", s.kv_blocks_cached);
  sample(out, "hearth_kv_blocks", "state=\"free\"", s.kv_blocks_free);
  metric(out, "hearth_kv_blocks_total", "gauge", "KV cache blocks in the pool.", s.kv_blocks_total);
  metric(out, "hearth_prefix_cache_hit_rate", "gauge", "Prompt tokens served by the prefix cache / tokens looked up.",
         s.prefix_hit_rate);
  metric(out, "hearth_prefix_cache_hit_tokens_total", "counter", "Prompt tokens served by the prefix cache.",
         static_cast<double>(s.prefix_hit_tokens));
  metric(out, "hearth_prefix_cache_evictions_total", "counter", "Cached KV blocks evicted for reuse.",
         static_cast<double>(s.prefix_evictions));
  metric(out, "hearth_preemptions_total", "counter", "Sequences preempted when KV blocks ran out.",
         static_cast<double>(s.preemptions));
  metric(out, "hearth_engine_steps_total", "counter", "Engine steps run.", static_cast<double>(s.steps));
  metric(out, "hearth_engine_requests_finished_total", "counter", "Requests the engine finished (any reason).",
         static_cast<double>(s.requests_finished));
  header(out, "hearth_memory_bytes", "gauge", "Memory by category (device_free/device_total: GPU only).");
  sample(out, "hearth_memory_bytes", "category=\"weights\"", static_cast<double>(s.memory.weights));
  sample(out, "hearth_memory_bytes", "category=\"kv_pool\"", static_cast<double>(s.memory.kv_pool));
  sample(out, "hearth_memory_bytes", "category=\"workspace\"", static_cast<double>(s.memory.workspace));
  sample(out, "hearth_memory_bytes", "category=\"device_free\"", static_cast<double>(s.memory.device_free));
  sample(out, "hearth_memory_bytes", "category=\"device_total\"", static_cast<double>(s.memory.device_total));
}

}  // namespace

bool is_known_route(std::string_view path) {
  for (std::size_t i = 0; i + 1 < kRoutes.size(); ++i) {
    if (kRoutes[i] == path) return true;
  }
  return false;
}

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double seconds, std::int64_t times) {
  std::size_t i = 0;
  while (i < bounds_.size() && seconds > bounds_[i]) ++i;
  counts_[i] += times;
  sum_ += seconds * static_cast<double>(times);
  count_ += times;
}

void Histogram::render(std::string& out, std::string_view name, std::string_view help) const {
  header(out, name, "histogram", help);
  const std::string bucket = std::string(name) + "_bucket";
  std::int64_t cumulative = 0;
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    sample(out, bucket, "le=\"" + number(bounds_[i]) + "\"", static_cast<double>(cumulative));
  }
  sample(out, bucket, "le=\"+Inf\"", static_cast<double>(count_));
  sample(out, std::string(name) + "_sum", "", sum_);
  sample(out, std::string(name) + "_count", "", static_cast<double>(count_));
}

ServerMetrics::ServerMetrics()
    : ttft_({0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}),
      inter_token_({0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}) {}

void ServerMetrics::count_response(std::string_view route, int status) {
  const std::string key(is_known_route(route) ? route : "other");
  std::lock_guard lock(mu_);
  ++responses_[{key, status}];
}

void ServerMetrics::observe_ttft(double seconds) {
  std::lock_guard lock(mu_);
  ttft_.observe(seconds);
}

void ServerMetrics::observe_inter_token(double seconds, std::int64_t tokens) {
  if (tokens < 1) return;
  std::lock_guard lock(mu_);
  inter_token_.observe(seconds / static_cast<double>(tokens), tokens);
}

void ServerMetrics::add_usage(const Usage& u) {
  std::lock_guard lock(mu_);
  prompt_tokens_ += u.prompt_tokens;
  cached_tokens_ += u.cached_tokens;
  generated_tokens_ += u.generated_tokens;
}

void ServerMetrics::count_disconnect() {
  std::lock_guard lock(mu_);
  ++disconnects_;
}

std::string ServerMetrics::render(const EngineStats& stats, const ServerGauges& gauges) const {
  std::string out;
  {
    std::lock_guard lock(mu_);
    header(out, "hearth_http_responses_total", "counter", "HTTP responses by route and status.");
    for (const auto& [key, count] : responses_) {
      sample(out, "hearth_http_responses_total",
             "route=\"" + key.first + "\",status=\"" + std::to_string(key.second) + "\"", static_cast<double>(count));
    }
    ttft_.render(out, "hearth_time_to_first_token_seconds", "Arrival of a request to its first token, per request.");
    inter_token_.render(out, "hearth_inter_token_latency_seconds", "Time between consecutive streamed tokens.");
    metric(out, "hearth_prompt_tokens_total", "counter", "Prompt tokens of finished requests.",
           static_cast<double>(prompt_tokens_));
    metric(out, "hearth_cached_prompt_tokens_total", "counter", "Prompt tokens served by the prefix cache.",
           static_cast<double>(cached_tokens_));
    metric(out, "hearth_generation_tokens_total", "counter", "Generated tokens of finished requests.",
           static_cast<double>(generated_tokens_));
    metric(out, "hearth_client_disconnects_total", "counter", "Requests cancelled because their client went away.",
           static_cast<double>(disconnects_));
  }
  metric(out, "hearth_http_active_requests", "gauge", "Completions being served now.", gauges.active_requests);
  metric(out, "hearth_http_max_concurrent_requests", "gauge", "The server's limit on concurrent completions.",
         gauges.max_concurrent);
  render_engine(out, stats);
  return out;
}

}  // namespace hearth::server
