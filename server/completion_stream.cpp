// A streamed completion: server-sent events written from the HTTP handler's
// thread as the engine produces text. cpp-httplib calls the content provider
// again and again until it says done; each call waits up to kPollInterval for
// an event, so a client that went away (its socket readable at EOF, or a
// write failing) is noticed within one interval and the request is cancelled
// in the engine at once, which frees its KV blocks.
#include <string>

#include "server/completion.h"

namespace hearth::server {
namespace {

struct StreamState {
  StreamState(ServerState& s, Submitted sub) : server(s), submitted(std::move(sub)), clock(submitted.arrival) {}
  ServerState& server;
  Submitted submitted;
  TokenClock clock;
  bool started = false;   // the opening chunk (chat: the assistant role) is out
  bool finished = false;  // the engine ended the request (or the stream ended it)
};

bool write(httplib::DataSink& sink, const std::string& data) {
  return sink.write(data.data(), data.size());
}

bool chat(const StreamState& st) {
  return st.submitted.ctx.endpoint == Endpoint::kChatCompletions;
}

// The last events: the finish reason, the usage chunk when asked for, [DONE];
// or an error event (the status line went out with the first byte).
bool write_finish(StreamState& st, const FinishEvent& finish, httplib::DataSink& sink) {
  st.finished = true;
  const Submitted& sub = st.submitted;
  if (finish.reason == FinishReason::kError || finish.reason == FinishReason::kCancelled) {
    const ApiError error = engine_error(finish);
    if (!write(sink, "data: " + error.body() + "\n\n")) return false;
    sink.done();
    return true;
  }
  st.server.metrics.add_usage(finish.usage);
  std::string out = sse_event(stream_chunk(sub.ctx, "", !st.started, finish.reason, sub.include_usage));
  if (sub.include_usage) out += sse_event(usage_chunk(sub.ctx, finish.usage));
  out += sse_done();
  if (!write(sink, out)) return false;
  sink.done();
  return true;
}

// One call of the content provider: false ends the response (a failed write
// or a client that is gone); the releaser below then cancels the request.
bool provide(StreamState& st, httplib::DataSink& sink) {
  const Submitted& sub = st.submitted;
  if (!st.started && chat(st)) {
    // The role chunk at once: the client sees the stream open before prefill ends.
    if (!write(sink, sse_event(stream_chunk(sub.ctx, "", true, std::nullopt, sub.include_usage)))) return false;
    st.started = true;
  }
  std::optional<SinkEvent> event = sub.sink->next(kPollInterval);
  if (!event) {
    if (st.server.stopping) st.server.engine.cancel(sub.id);
    return sink.is_writable();
  }
  if (const auto* finish = std::get_if<FinishEvent>(&*event)) return write_finish(st, *finish, sink);
  const TextEvent& text = std::get<TextEvent>(*event);
  st.clock.on_text(st.server.metrics, text);
  if (text.text.empty()) return true;  // tokens held back while a stop string may be starting
  const bool first = !st.started;
  st.started = true;
  return write(sink, sse_event(stream_chunk(sub.ctx, text.text, first, std::nullopt, sub.include_usage)));
}

}  // namespace

void stream_response(ServerState& s, Submitted submitted, httplib::Response& res) {
  auto st = std::make_shared<StreamState>(s, std::move(submitted));
  res.status = 200;
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  res.set_chunked_content_provider(
      "text/event-stream", [st](std::size_t, httplib::DataSink& sink) { return provide(*st, sink); },
      [st](bool) {
        if (st->finished) return;
        // The client went away (or the write failed) before the engine finished.
        st->server.engine.cancel(st->submitted.id);
        if (!st->server.stopping) st->server.metrics.count_disconnect();
      });
}

}  // namespace hearth::server
