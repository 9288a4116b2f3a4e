// The server's own counters (responses by route and status, client-side
// latencies, tokens, disconnects) and GET /metrics: those plus the engine's
// EngineStats snapshot in Prometheus' text exposition format (version 0.0.4).
// Metric and label names are an interface (dashboards use them): add, never rename.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hearth/engine.h"
#include "hearth/metrics.h"

namespace hearth::server {

// Cumulative-bucket histogram in seconds, as Prometheus expects.
class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void observe(double seconds, std::int64_t times = 1);
  // "# HELP/# TYPE" lines, then NAME_bucket{le=...}, NAME_sum, NAME_count.
  void render(std::string& out, std::string_view name, std::string_view help) const;

 private:
  std::vector<double> bounds_;        // ascending upper bounds; +Inf is implicit
  std::vector<std::int64_t> counts_;  // per bucket (not cumulative); one more than bounds_ (+Inf)
  double sum_ = 0;
  std::int64_t count_ = 0;
};

// Where the server stands, for the gauges that are not the engine's.
struct ServerGauges {
  int active_requests = 0;  // completions being served now
  int max_concurrent = 0;   // --max-concurrent
};

class ServerMetrics {
 public:
  ServerMetrics();
  // `route` is one of the server's routes; any other path is counted as "other"
  // (a hostile client must not grow the label set).
  void count_response(std::string_view route, int status);
  void observe_ttft(double seconds);
  // `seconds` between two text events that carried `tokens` tokens: that many
  // inter-token gaps of seconds / tokens each.
  void observe_inter_token(double seconds, std::int64_t tokens);
  void add_usage(const Usage& usage);
  void count_disconnect();

  std::string render(const EngineStats& stats, const ServerGauges& gauges) const;

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, std::int64_t> responses_;  // (route, status) -> count
  Histogram ttft_;
  Histogram inter_token_;
  std::int64_t prompt_tokens_ = 0;
  std::int64_t cached_tokens_ = 0;
  std::int64_t generated_tokens_ = 0;
  std::int64_t disconnects_ = 0;
};

// The routes the server counts by name.
bool is_known_route(std::string_view path);

}  // namespace hearth::server
