// POST /v1/chat/completions and /v1/completions: parse, check the model and
// the prompt's length against the context, take a concurrency slot, submit to
// the engine, answer whole or stream.
#include <ctime>
#include <string>

#include "server/client_socket.h"
#include "server/completion.h"

namespace hearth::server {
namespace {

// The prompt's length in tokens, as the engine will see it. A text prompt of
// /v1/completions is tokenized here once and submitted as token ids (exactly
// the engine's own encoding: special tokens added and parsed); chat messages
// stay messages (the engine renders them through the model's template) and
// are counted by rendering them the same way.
ApiResult<std::size_t> prompt_length(const ServerState& s, Request& r) {
  if (!r.messages.empty()) {
    Result<std::string> text = s.engine.render_chat(r.messages, /*add_generation_prompt=*/true);
    if (!text) return bad_request("messages", "The chat template failed: " + text.error().message);
    Result<std::vector<std::int32_t>> ids = s.engine.tokenize(*text, /*add_special=*/false, /*parse_special=*/true);
    if (!ids) return bad_request("messages", "The messages cannot be tokenized: " + ids.error().message);
    const bool adds_bos = s.bos && (ids->empty() || ids->front() != *s.bos);
    return ids->size() + (adds_bos ? 1 : 0);
  }
  if (!r.prompt_text.empty()) {
    Result<std::vector<std::int32_t>> ids = s.engine.tokenize(r.prompt_text, true, true);
    if (!ids) return bad_request("prompt", "The prompt cannot be tokenized: " + ids.error().message);
    r.prompt_tokens = std::move(ids).value();
    r.prompt_text.clear();
    if (r.prompt_tokens.empty()) return bad_request("prompt", "The prompt has no tokens");
  }
  const std::uint32_t vocab = s.engine.model_info().n_vocab;
  for (std::size_t i = 0; i < r.prompt_tokens.size(); ++i) {
    if (vocab > 0 && static_cast<std::uint32_t>(r.prompt_tokens[i]) >= vocab) {
      return bad_request(
          "prompt[" + std::to_string(i) + "]",
          "Token id " + std::to_string(r.prompt_tokens[i]) + " is outside the vocabulary of " + std::to_string(vocab));
    }
  }
  return r.prompt_tokens.size();
}

ApiResult<bool> check_length(const ServerState& s, const ApiRequest& api, std::size_t n) {
  const std::string param = api.endpoint == Endpoint::kChatCompletions ? "messages" : "prompt";
  const auto context = static_cast<std::size_t>(s.engine.context_length());
  if (n >= context) {
    return bad_request(param,
                       "This model's context is " + std::to_string(context) + " tokens; the prompt has " +
                           std::to_string(n) + " tokens (the context holds the prompt and the answer together)",
                       "context_length_exceeded");
  }
  const std::int32_t limit = s.options.max_prompt_tokens;
  if (limit > 0 && n > static_cast<std::size_t>(limit)) {
    return bad_request(param,
                       "The prompt has " + std::to_string(n) + " tokens; this server's limit is " +
                           std::to_string(limit) + " (--max-prompt-tokens)",
                       "prompt_too_long");
  }
  return true;
}

// max_tokens, seed: what the parser left for the server to decide.
void finish_request(const ServerState& s, ApiRequest& api, std::size_t prompt_tokens, std::uint64_t id) {
  Request& r = api.engine;
  if (api.max_tokens) {
    r.max_tokens = *api.max_tokens;
  } else if (api.endpoint == Endpoint::kCompletions) {
    r.max_tokens = s.options.completions_max_tokens;
  } else {
    r.max_tokens = s.engine.context_length() - static_cast<std::int32_t>(prompt_tokens);  // the rest of the context
  }
  if (!api.seed_given) r.sampling.seed = s.fresh_seed(id);
}

// Waits for the whole answer, looking at the client's socket between events:
// a client that hung up has its request cancelled (it frees its KV blocks).
void whole_response(ServerState& s, Submitted sub, const httplib::Request& req, httplib::Response& res) {
  TokenClock clock(sub.arrival);
  const ClientSocket client(req.local_addr, req.local_port, req.remote_addr, req.remote_port);
  bool cancelled = false;
  Clock::time_point next_look = Clock::now() + kPollInterval;
  std::string text;
  for (;;) {
    std::optional<SinkEvent> event = sub.sink->next(kPollInterval);
    // Once per interval, whether events come faster (a fast decode) or not at all (a long prefill).
    if (!cancelled && Clock::now() >= next_look) {
      next_look = Clock::now() + kPollInterval;
      if (s.stopping || client.gone()) {
        s.engine.cancel(sub.id);
        if (!s.stopping) s.metrics.count_disconnect();
        cancelled = true;
      }
    }
    if (!event) continue;
    if (const auto* t = std::get_if<TextEvent>(&*event)) {
      clock.on_text(s.metrics, *t);
      text += t->text;
      continue;
    }
    const FinishEvent& finish = std::get<FinishEvent>(*event);
    if (cancelled && !s.stopping) {
      // Nobody reads this; 499 (nginx's "client closed request") keeps the status counts honest.
      return send_error(res, ApiError{499, "The client closed the connection", "invalid_request_error", "", ""});
    }
    if (finish.reason == FinishReason::kError || finish.reason == FinishReason::kCancelled) {
      send_error(res, engine_error(finish));
      return;
    }
    s.metrics.add_usage(finish.usage);
    send_json(res, 200, completion_body(sub.ctx, text, finish));
    return;
  }
}

}  // namespace

void TokenClock::on_text(ServerMetrics& metrics, const TextEvent& event) {
  const auto tokens = static_cast<std::int64_t>(event.token_ids.size());
  if (tokens == 0) return;
  const auto seconds = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
  if (!last_) {
    metrics.observe_ttft(seconds(event.time - arrival_));
    // The first event's other tokens (a held-back stop-string prefix) count as gaps of zero.
    if (tokens > 1) metrics.observe_inter_token(0.0, tokens - 1);
  } else {
    metrics.observe_inter_token(seconds(event.time - *last_), tokens);
  }
  last_ = event.time;
}

ApiError engine_error(const FinishEvent& finish) {
  if (finish.reason == FinishReason::kCancelled) return overloaded("The server is shutting down");
  const Error e = finish.error.value_or(make_error(ErrorCode::kInternal, "the engine failed the request"));
  switch (e.code) {
    case ErrorCode::kContextExceeded:
      return bad_request("", e.message, "context_length_exceeded");
    case ErrorCode::kInvalidArgument:
      return bad_request("", e.message);
    case ErrorCode::kUnsupported:
      return bad_request("", e.message, "unsupported_value");
    case ErrorCode::kOutOfMemory:
      return overloaded("The engine is out of KV cache memory: retry later (" + e.message + ")");
    default:
      return internal_error(e.describe());
  }
}

void handle_completion(ServerState& s, Endpoint endpoint, const httplib::Request& req, httplib::Response& res) {
  const Clock::time_point arrival = Clock::now();
  ApiResult<ApiRequest> parsed = parse_request(endpoint, req.body, s.options.parse);
  if (!parsed) return send_error(res, parsed.error());
  ApiRequest& api = parsed.value();
  if (!s.serves(api.model)) return send_error(res, model_not_found(api.model));
  ApiResult<std::size_t> n = prompt_length(s, api.engine);
  if (!n) return send_error(res, n.error());
  if (ApiResult<bool> fits = check_length(s, api, n.value()); !fits) return send_error(res, fits.error());
  Slot slot = Slot::acquire(s.active, s.options.max_concurrent);
  if (!slot) return send_error(res, too_many_requests(s.options.max_concurrent));
  if (s.stopping) return send_error(res, overloaded("The server is shutting down"));

  const std::uint64_t number = s.next_id.fetch_add(1);
  finish_request(s, api, n.value(), number);
  Submitted sub;
  sub.sink = std::make_shared<QueueSink>();
  sub.ctx = ResponseContext{endpoint,
                            (endpoint == Endpoint::kChatCompletions ? "chatcmpl-" : "cmpl-") + std::to_string(number),
                            static_cast<std::int64_t>(std::time(nullptr)), s.options.model_id};
  sub.include_usage = api.include_usage;
  sub.slot = std::move(slot);
  sub.arrival = arrival;
  sub.id = s.engine.submit(std::move(api.engine), sub.sink);
  if (api.stream) {
    stream_response(s, std::move(sub), res);
  } else {
    whole_response(s, std::move(sub), req, res);
  }
}

}  // namespace hearth::server
