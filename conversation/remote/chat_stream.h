// One answer's response, read as its bytes arrive (no HTTP library here, so
// it is tested byte by byte): the status and content type first, then the
// body: server-sent events of chat chunks for a 200 stream, a whole JSON
// answer when the server did not stream, an error body otherwise. Text goes
// to the callback as soon as a chunk is read; end() says how the answer
// ended, given what the transport saw, with an error that names the cause:
// the HTTP status and the server's message, a stream cut before its end,
// malformed data. Memory is bounded by the limits whatever the server sends.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "conversation/remote/openai_chat.h"
#include "conversation/remote/sse_parser.h"
#include "hearth/engine.h"

namespace hearth::remote {

struct StreamLimits {
  SseLimits sse{};
  std::size_t max_error_body_bytes = 64 * 1024;           // read of an error response (the rest is dropped)
  std::size_t max_whole_answer_bytes = 8u * 1024 * 1024;  // a non-streamed answer
};

// How the answer ended, from the client's side.
struct StreamEnd {
  FinishReason reason = FinishReason::kStop;
  std::optional<Error> error;  // reason kError
  std::optional<ServerUsage> usage;
};

class ChatStreamReader {
 public:
  using TextFn = std::function<void(std::string_view text)>;
  ChatStreamReader(TextFn on_text, StreamLimits limits = {});

  // The response's status line and headers arrived.
  void start(int status, std::string_view content_type);
  // Body bytes; false: stop reading (the answer is over, or its data is bad).
  bool receive(std::string_view bytes);

  // After the transfer: `transport_error` is the HTTP client's failure ("" when
  // the body ended normally); `where` names the endpoint in messages. A whole
  // (non-streamed) answer's text goes to on_text here, in one piece.
  StreamEnd end(const std::string& transport_error, const std::string& where) const;

  int status() const { return status_; }
  std::size_t body_bytes() const { return body_bytes_; }
  std::size_t chunks_with_text() const { return text_chunks_; }

 private:
  enum class Mode { kNone, kEvents, kWhole, kErrorBody };
  bool on_event(std::string_view data);
  bool stop_with(Error error);

  TextFn on_text_;
  StreamLimits limits_;
  Mode mode_ = Mode::kNone;
  int status_ = 0;
  SseParser sse_;
  std::vector<std::string> events_;
  std::string held_;  // the whole answer, or the error body
  std::size_t body_bytes_ = 0;
  std::size_t text_chunks_ = 0;
  bool done_ = false;  // [DONE] read
  std::optional<FinishReason> finish_;
  std::optional<ServerUsage> usage_;
  std::optional<Error> error_;  // malformed data or a server error: the answer stops
};

// The error of an HTTP status other than 200 with the server's message.
Error status_error(int status, const std::string& server_message, const std::string& where);

}  // namespace hearth::remote
