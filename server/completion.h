// A completion after it was submitted to the engine (internal to server/):
// answered whole (completion_handler.cpp) or as a stream of server-sent
// events (completion_stream.cpp).
#pragma once

#include <chrono>
#include <memory>
#include <optional>

#include <httplib.h>

#include "hearth/engine.h"
#include "server/api_response.h"
#include "server/request_sink.h"
#include "server/server_state.h"

namespace hearth::server {

// How long a handler waits for the engine before it looks at its client's
// socket and the shutdown flag again: the bound on noticing a disconnect.
inline constexpr std::chrono::milliseconds kPollInterval{20};

struct Submitted {
  RequestId id = 0;
  std::shared_ptr<QueueSink> sink;
  ResponseContext ctx;
  bool include_usage = false;
  Slot slot;
  Clock::time_point arrival;
};

// Feeds the server's latency histograms from a request's events.
class TokenClock {
 public:
  explicit TokenClock(Clock::time_point arrival) : arrival_(arrival) {}
  void on_text(ServerMetrics& metrics, const TextEvent& event);

 private:
  Clock::time_point arrival_;
  std::optional<Clock::time_point> last_;
};

// The status and OpenAI error for a request the engine ended with kError or kCancelled.
ApiError engine_error(const FinishEvent& finish);

void stream_response(ServerState& state, Submitted submitted, httplib::Response& res);

}  // namespace hearth::server
