#include "conversation/remote/remote_engine.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <list>
#include <mutex>
#include <thread>

#include "engine/metrics/rolling_window.h"

namespace hearth::remote {
namespace {

using Ms = std::chrono::duration<double, std::milli>;

void configure(httplib::Client& client, const Endpoint& e, int connect_ms, int read_ms) {
  const auto split = [](int ms) { return std::pair<time_t, time_t>(ms / 1000, (ms % 1000) * 1000); };
  const auto [cs, cus] = split(connect_ms);
  const auto [rs, rus] = split(read_ms);
  client.set_connection_timeout(cs, cus);
  client.set_read_timeout(rs, rus);
  client.set_write_timeout(rs, rus);
  client.set_keep_alive(false);
  if (!e.api_key.empty()) client.set_bearer_token_auth(e.api_key);
}

// httplib's names for its failures ("Connection", "Read") made into a cause a user can act on.
std::string transport_text(httplib::Error error) {
  switch (error) {
    case httplib::Error::Success:
      return {};
    case httplib::Error::Connection:
      return "connection refused or host unreachable";
    case httplib::Error::ConnectionTimeout:
      return "timed out connecting";
    case httplib::Error::Read:
      return "the connection broke or went silent while reading";
    case httplib::Error::Write:
      return "the connection broke while sending the request";
    case httplib::Error::SSLConnection:
      return "the TLS handshake failed";
    case httplib::Error::SSLServerVerification:
      return "the server's TLS certificate was not accepted";
    default:
      return httplib::to_string(error);
  }
}

// One request's client-side measurements, turned into the engine's Usage.
struct Timing {
  Clock::time_point submitted;
  std::optional<Clock::time_point> first, last;
  std::vector<double> gaps_ms;  // between consecutive text chunks
  std::int64_t chunks = 0;

  void text_arrived(Clock::time_point t) {
    if (!first) first = t;
    if (last) gaps_ms.push_back(Ms(t - *last).count());
    last = t;
    ++chunks;
  }

  Usage usage(const std::optional<ServerUsage>& server, Clock::time_point finished) {
    Usage u;
    if (server && server->prompt_tokens >= 0) u.prompt_tokens = static_cast<std::int32_t>(server->prompt_tokens);
    if (server && server->cached_tokens >= 0) u.cached_tokens = static_cast<std::int32_t>(server->cached_tokens);
    const std::int64_t generated = server && server->completion_tokens >= 0 ? server->completion_tokens : chunks;
    u.generated_tokens = static_cast<std::int32_t>(generated);
    u.total_ms = Ms(finished - submitted).count();
    if (first) {
      u.ttft_ms = Ms(*first - submitted).count();
      if (u.ttft_ms > 0 && u.prompt_tokens > 0) u.prefill_tps = (u.prompt_tokens - u.cached_tokens) / u.ttft_ms * 1e3;
      const double decode_ms = Ms(*last - *first).count();
      if (generated > 1 && decode_ms > 0) u.decode_tps = static_cast<double>(generated - 1) / decode_ms * 1e3;
    }
    std::sort(gaps_ms.begin(), gaps_ms.end());
    if (!gaps_ms.empty()) {
      u.itl_p50_ms = metrics::nearest_rank(gaps_ms, 0.50);
      u.itl_p95_ms = metrics::nearest_rank(gaps_ms, 0.95);
      u.itl_p99_ms = metrics::nearest_rank(gaps_ms, 0.99);
    }
    return u;
  }
};

class RemoteEngine final : public Engine {
 public:
  explicit RemoteEngine(RemoteOptions options) : options_(std::move(options)) {
    info_.architecture = "remote";
    info_.name = options_.model;
    run_.device = options_.endpoint.base_url;
    run_.device_name = "remote endpoint " + options_.endpoint.base_url;
    run_.chat_format = "the server's";
  }

  ~RemoteEngine() override {
    std::list<std::shared_ptr<Call>> calls;
    {
      std::lock_guard lock(mutex_);
      calls.swap(calls_);
    }
    for (auto& c : calls) stop(*c);
    for (auto& c : calls) c->thread.join();
  }

  RequestId submit(Request request, std::shared_ptr<Sink> sink) override {
    auto call = std::make_shared<Call>();
    std::lock_guard lock(mutex_);
    reap();
    call->id = next_id_++;
    call->thread = std::thread([this, call, request = std::move(request), sink = std::move(sink)]() mutable {
      run(*call, request, *sink);
      call->done = true;
    });
    calls_.push_back(call);
    return call->id;
  }

  std::vector<RequestId> submit_all(std::vector<Submission> submissions) override {
    std::vector<RequestId> ids;
    for (auto& s : submissions) ids.push_back(submit(std::move(s.request), std::move(s.sink)));
    return ids;
  }

  void cancel(RequestId id) override {
    std::lock_guard lock(mutex_);
    for (auto& c : calls_) {
      if (c->id == id) stop(*c);
    }
  }

  EngineStats stats() const override {
    EngineStats s;
    std::lock_guard lock(mutex_);
    for (const auto& c : calls_) s.running += c->done ? 0 : 1;
    return s;
  }

  bool continues() const { return options_.continues_answers; }

  const ModelHyperParams& model_info() const override { return info_; }
  const ModelRunInfo& run_info() const override { return run_; }
  std::int32_t context_length() const override { return 0; }  // the server's own; not reported by OpenAI's API
  Result<std::vector<std::int32_t>> tokenize(std::string_view, bool, bool) const override { return local_only(); }
  Result<std::string> render_chat(const std::vector<ChatTurn>&, bool) const override { return local_only(); }
  Result<std::string> detokenize(const std::vector<std::int32_t>&) const override { return local_only(); }

 private:
  struct Call {
    RequestId id = 0;
    std::thread thread;
    std::atomic<bool> cancelled{false};
    std::atomic<bool> done{false};
    std::mutex client_mutex;
    httplib::Client* client = nullptr;  // while the request runs
  };

  static Error local_only() {
    return make_error(ErrorCode::kUnsupported,
                      "a remote endpoint has no local tokenizer or chat template (the server applies its own)");
  }

  static void stop(Call& c) {
    c.cancelled = true;
    std::lock_guard lock(c.client_mutex);
    if (c.client) c.client->stop();  // shuts the socket: a blocked read returns at once
  }

  // Joins calls that finished (under mutex_).
  void reap() {
    for (auto it = calls_.begin(); it != calls_.end();) {
      if ((*it)->done) {
        (*it)->thread.join();
        it = calls_.erase(it);
      } else {
        ++it;
      }
    }
  }

  void run(Call& call, const Request& request, Sink& sink) {
    Timing timing;
    timing.submitted = Clock::now();
    FinishEvent finish;
    finish.id = call.id;
    const std::string where = options_.endpoint.base_url;
    auto body = request.continue_text.empty() || options_.continues_answers
                    ? chat_request_body(options_.model, request, /*stream=*/true)
                    : Result<std::string>(make_error(
                          ErrorCode::kUnsupported,
                          where + " cannot continue an answer: only a server that honours continue_final_message "
                                  "(hearth-server) can, and this one does not say it does"));
    if (!body) {
      finish.reason = FinishReason::kError;
      finish.error = std::move(body).error();
      return sink.on_finish(finish);
    }
    ChatStreamReader reader(
        [&](std::string_view text) {
          const auto now = Clock::now();
          timing.text_arrived(now);
          sink.on_text(TextEvent{call.id, std::string(text), {}, now});
        },
        options_.limits);
    httplib::Client client(options_.endpoint.origin);
    configure(client, options_.endpoint, options_.connect_timeout_ms, options_.read_timeout_ms);
    httplib::Request req;
    req.method = "POST";
    req.path = options_.endpoint.path_prefix + "/chat/completions";
    req.set_header("Accept", "text/event-stream");
    req.set_header("Content-Type", "application/json");
    req.body = std::move(body).value();
    req.response_handler = [&](const httplib::Response& r) {
      reader.start(r.status, r.get_header_value("Content-Type"));
      return !call.cancelled;
    };
    req.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
      return reader.receive(std::string_view(data, n)) && !call.cancelled;
    };
    {
      std::lock_guard lock(call.client_mutex);
      call.client = &client;
    }
    httplib::Response response;
    httplib::Error error = httplib::Error::Success;
    if (!call.cancelled) client.send(req, response, error);
    {
      std::lock_guard lock(call.client_mutex);
      call.client = nullptr;
    }
    // httplib skips the handler for a body-less status (204): the reader still needs it.
    if (reader.status() == 0 && response.status > 0) {
      reader.start(response.status, response.get_header_value("Content-Type"));
    }
    // Our own "stop reading" shows as Canceled: the reader knows why it stopped.
    if (error == httplib::Error::Canceled) error = httplib::Error::Success;
    StreamEnd end = reader.end(transport_text(error), where);
    if (call.cancelled) end = StreamEnd{FinishReason::kCancelled, std::nullopt, end.usage};
    finish.reason = end.reason;
    finish.error = end.error;
    finish.usage = timing.usage(end.usage, Clock::now());
    sink.on_finish(finish);
  }

  RemoteOptions options_;
  ModelHyperParams info_;
  ModelRunInfo run_;
  mutable std::mutex mutex_;
  std::list<std::shared_ptr<Call>> calls_;
  RequestId next_id_ = 1;
};

}  // namespace

Result<std::vector<ModelEntry>> list_model_entries(const Endpoint& endpoint, int timeout_ms) {
  httplib::Client client(endpoint.origin);
  configure(client, endpoint, timeout_ms, timeout_ms);
  const std::string where = endpoint.base_url;
  std::string body;
  int status = 0;
  constexpr std::size_t kMaxBytes = 4u * 1024 * 1024;
  bool too_big = false;
  auto result = client.Get(
      endpoint.path_prefix + "/models", httplib::Headers{},
      [&](const httplib::Response& r) {
        status = r.status;
        return true;
      },
      [&](const char* data, std::size_t n) {
        if (body.size() + n > kMaxBytes) return !(too_big = true);
        body.append(data, n);
        return true;
      });
  if (status == 0) {
    return make_error(ErrorCode::kIo, "cannot reach " + where + ": " + transport_text(result.error()));
  }
  if (too_big) return make_error(ErrorCode::kCorruptFile, "the model list of " + where + " is larger than 4 MiB");
  if (status != 200) return status_error(status, error_body_message(body), where);
  if (result.error() != httplib::Error::Success) {
    return make_error(ErrorCode::kIo, "the model list from " + where + " was cut: " + transport_text(result.error()));
  }
  auto entries = read_model_entries(body);
  if (!entries) {
    Error e = std::move(entries).error();
    e.message = "malformed data from " + where + ": " + e.message;
    return e;
  }
  return entries;
}

Result<std::vector<std::string>> list_models(const Endpoint& endpoint, int timeout_ms) {
  HEARTH_ASSIGN_OR_RETURN(const std::vector<ModelEntry> entries, list_model_entries(endpoint, timeout_ms));
  std::vector<std::string> ids;
  for (const ModelEntry& e : entries) ids.push_back(e.id);
  return ids;
}

bool continues_answers(const Engine& engine) {
  const auto* remote = dynamic_cast<const RemoteEngine*>(&engine);
  return remote == nullptr || remote->continues();
}

std::unique_ptr<Engine> make_remote_engine(RemoteOptions options) {
  return std::make_unique<RemoteEngine>(std::move(options));
}

Result<std::unique_ptr<Engine>> connect_remote(RemoteOptions options) {
  HEARTH_ASSIGN_OR_RETURN(const std::vector<ModelEntry> entries,
                          list_model_entries(options.endpoint, options.connect_timeout_ms));
  std::vector<std::string> ids;
  for (const ModelEntry& e : entries) ids.push_back(e.id);
  const std::string where = options.endpoint.base_url;
  std::string listed;
  for (const auto& id : ids) listed += (listed.empty() ? "" : ", ") + id;
  if (options.model.empty()) {
    if (ids.size() != 1) {
      return make_error(ErrorCode::kInvalidArgument,
                        where + " serves " + std::to_string(ids.size()) + " models" +
                            (ids.empty() ? std::string() : " (" + printable(listed, 400) + ")") + ": name one");
    }
    options.model = ids.front();
  } else if (std::find(ids.begin(), ids.end(), options.model) == ids.end()) {
    return make_error(ErrorCode::kNotFound, where + " does not serve a model '" + printable(options.model) +
                                                "' (it serves: " + printable(listed, 400) + ")");
  }
  const auto chosen =
      std::find_if(entries.begin(), entries.end(), [&](const ModelEntry& e) { return e.id == options.model; });
  options.continues_answers = chosen->owned_by == "hearth";  // hearth-server reads continue_final_message
  return make_remote_engine(std::move(options));
}

}  // namespace hearth::remote
