// What the route handlers share (internal to server/): the engine, the
// options, the counters, the concurrency slots and the shutdown flag.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <httplib.h>

#include "hearth/engine.h"
#include "server/api_error.h"
#include "server/openai_server.h"
#include "server/server_metrics.h"

namespace hearth::server {

struct ServerState {
  ServerState(Engine& e, ServerOptions o);

  Engine& engine;
  const ServerOptions options;
  ServerMetrics metrics;
  std::atomic<int> active{0};  // completions in flight (the slots of max_concurrent)
  std::atomic<bool> stopping{false};
  std::atomic<std::uint64_t> next_id{1};
  std::uint64_t seed_base = 0;      // unseeded requests draw seed_base + id (mixed)
  std::optional<std::int32_t> bos;  // the token the engine puts before a chat prompt, if any
  std::int64_t started_at = 0;      // Unix seconds

  bool serves(std::string_view model) const;
  // A fresh seed for a request that gave none (OpenAI's unseeded requests differ run to run).
  std::uint64_t fresh_seed(std::uint64_t id) const;
};

// One of max_concurrent slots, held while a completion runs; empty when all are taken.
class Slot {
 public:
  static Slot acquire(std::atomic<int>& active, int limit);
  Slot() = default;
  Slot(Slot&& other) noexcept : active_(other.active_) { other.active_ = nullptr; }
  Slot& operator=(Slot&& other) noexcept {
    std::swap(active_, other.active_);
    return *this;
  }
  Slot(const Slot&) = delete;
  ~Slot();
  explicit operator bool() const { return active_ != nullptr; }

 private:
  explicit Slot(std::atomic<int>* active) : active_(active) {}
  std::atomic<int>* active_ = nullptr;
};

void send_error(httplib::Response& res, const ApiError& error);
void send_json(httplib::Response& res, int status, const std::string& body);

// POST /v1/chat/completions and /v1/completions (completion_handler.cpp).
void handle_completion(ServerState& state, Endpoint endpoint, const httplib::Request& req, httplib::Response& res);

}  // namespace hearth::server
