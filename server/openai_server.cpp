#include "server/openai_server.h"

#include <ctime>
#include <random>

#include <nlohmann/json.hpp>

#include "server/server_state.h"

namespace hearth::server {
namespace {

// splitmix64: spreads consecutive request numbers over the seed space.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Compares without an early exit, so the time taken does not tell how much of a guess was right.
bool same_key(std::string_view a, std::string_view b) {
  unsigned diff = a.size() == b.size() ? 0u : 1u;
  for (std::size_t i = 0; i < a.size(); ++i)
    diff |= static_cast<unsigned char>(a[i]) ^ (i < b.size() ? static_cast<unsigned char>(b[i]) : 0u);
  return diff == 0;
}

std::optional<ApiError> check_key(const ServerOptions& o, const httplib::Request& req) {
  if (o.api_key.empty() || req.path == "/health") return std::nullopt;
  const std::string header = req.get_header_value("Authorization");
  constexpr std::string_view kBearer = "Bearer ";
  if (header.empty()) return unauthorized("Missing API key: send 'Authorization: Bearer KEY'");
  if (header.compare(0, kBearer.size(), kBearer) != 0 ||
      !same_key(std::string_view(header).substr(kBearer.size()), o.api_key)) {
    return unauthorized("Incorrect API key");
  }
  return std::nullopt;
}

nlohmann::json model_json(const ServerState& s) {
  return {{"id", s.options.model_id}, {"object", "model"}, {"created", s.started_at}, {"owned_by", "hearth"}};
}

void add_routes(httplib::Server& http, ServerState& s) {
  http.Get("/health", [&s](const httplib::Request&, httplib::Response& res) {
    send_json(res, s.stopping ? 503 : 200, nlohmann::json{{"status", s.stopping ? "stopping" : "ok"}}.dump());
  });
  http.Get("/metrics", [&s](const httplib::Request&, httplib::Response& res) {
    const ServerGauges gauges{s.active.load(), s.options.max_concurrent};
    res.set_content(s.metrics.render(s.engine.stats(), gauges), "text/plain; version=0.0.4; charset=utf-8");
  });
  http.Get("/v1/models", [&s](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200, nlohmann::json{{"object", "list"}, {"data", {model_json(s)}}}.dump());
  });
  http.Get(R"(/v1/models/(.+))", [&s](const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    if (!s.serves(id)) return send_error(res, model_not_found(id));
    send_json(res, 200, model_json(s).dump());
  });
  http.Post("/v1/chat/completions", [&s](const httplib::Request& req, httplib::Response& res) {
    handle_completion(s, Endpoint::kChatCompletions, req, res);
  });
  http.Post("/v1/completions", [&s](const httplib::Request& req, httplib::Response& res) {
    handle_completion(s, Endpoint::kCompletions, req, res);
  });
}

void add_hooks(httplib::Server& http, ServerState& s) {
  http.set_pre_routing_handler([&s](const httplib::Request& req, httplib::Response& res) {
    if (std::optional<ApiError> denied = check_key(s.options, req)) {
      send_error(res, *denied);
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // httplib's own errors (no route: 404; body over the limit: 413) get OpenAI's
  // shape; responses the handlers filled keep theirs.
  http.set_error_handler([&s](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 413) return send_error(res, body_too_large(s.options.max_body_bytes));
    if (res.status == 404) return send_error(res, route_not_found(req.method, req.path));
    send_error(res, ApiError{res.status, "HTTP error " + std::to_string(res.status), "invalid_request_error", "", ""});
  });
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    send_error(res, internal_error("An exception escaped a request handler"));
  });
  http.set_logger([&s](const httplib::Request& req, const httplib::Response& res) {
    s.metrics.count_response(req.path, res.status);
  });
}

}  // namespace

ServerState::ServerState(Engine& e, ServerOptions o) : engine(e), options(std::move(o)) {
  seed_base = (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  started_at = static_cast<std::int64_t>(std::time(nullptr));
  // What the engine adds before a chat prompt: the special tokens of an empty encoding.
  if (Result<std::vector<std::int32_t>> ids = engine.tokenize("", true, false); ids && !ids->empty()) {
    bos = ids->front();
  }
}

bool ServerState::serves(std::string_view model) const {
  if (model == options.model_id) return true;
  for (const std::string& alias : options.model_aliases) {
    if (model == alias) return true;
  }
  return false;
}

std::uint64_t ServerState::fresh_seed(std::uint64_t id) const {
  return mix(seed_base + id);
}

Slot Slot::acquire(std::atomic<int>& active, int limit) {
  int now = active.load();
  while (now < limit) {
    if (active.compare_exchange_weak(now, now + 1)) return Slot(&active);
  }
  return Slot();
}

Slot::~Slot() {
  if (active_) active_->fetch_sub(1);
}

void send_json(httplib::Response& res, int status, const std::string& body) {
  res.status = status;
  res.set_content(body, "application/json");
}

void send_error(httplib::Response& res, const ApiError& error) {
  send_json(res, error.status, error.body());
}

struct OpenAiServer::Impl {
  Impl(Engine& engine, ServerOptions options) : state(engine, std::move(options)) {}
  ServerState state;
  httplib::Server http;
};

OpenAiServer::OpenAiServer(Engine& engine, ServerOptions options)
    : impl_(std::make_unique<Impl>(engine, std::move(options))) {
  ServerState& s = impl_->state;
  httplib::Server& http = impl_->http;
  // One thread per connection: room for every allowed completion plus the
  // cheap routes (/health, /metrics) and the 429s past the limit.
  const auto threads = static_cast<std::size_t>(s.options.max_concurrent) + 8;
  http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  http.set_payload_max_length(s.options.max_body_bytes);
  http.set_tcp_nodelay(true);  // a token per write: do not wait to fill a segment
  add_hooks(http, s);
  add_routes(http, s);
}

OpenAiServer::~OpenAiServer() {
  stop();
}

Result<int> OpenAiServer::bind() {
  const ServerOptions& o = impl_->state.options;
  const int port =
      o.port == 0 ? impl_->http.bind_to_any_port(o.host) : (impl_->http.bind_to_port(o.host, o.port) ? o.port : -1);
  if (port < 0) {
    return make_error(ErrorCode::kIo, "cannot listen on " + o.host + ":" + std::to_string(o.port) +
                                          " (in use, or not an address of this machine)");
  }
  return port;
}

Result<void> OpenAiServer::serve() {
  if (!impl_->http.listen_after_bind()) {
    if (impl_->state.stopping) return {};
    return make_error(ErrorCode::kIo, "the HTTP server stopped accepting connections");
  }
  return {};
}

bool OpenAiServer::running() const {
  return impl_->http.is_running();
}

void OpenAiServer::stop() {
  impl_->state.stopping = true;
  impl_->http.stop();
}

}  // namespace hearth::server
