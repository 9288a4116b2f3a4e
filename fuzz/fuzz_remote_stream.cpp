// libFuzzer harness for what a remote endpoint sends back: the first byte
// picks the response (its low two bits: a 200 event stream, a 200 JSON
// answer, an error status; the rest: the size of the pieces the body is fed
// in), the remaining bytes are the body. It goes through the same reader the
// remote engine uses, with small limits so they are reached; the bytes are
// also read as a model list, an error body and an endpoint URL. The reader
// must end with exactly one outcome, an error when it stopped on bad data,
// and hold no more than its limits allow.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "conversation/remote/chat_stream.h"
#include "conversation/remote/endpoint.h"

namespace {

using namespace hearth::remote;

void require(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t selector = data[0];
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  StreamLimits limits;
  limits.sse.max_line_bytes = 512;
  limits.sse.max_event_bytes = 1024;
  limits.max_error_body_bytes = 256;
  limits.max_whole_answer_bytes = 2048;
  std::size_t text_bytes = 0;
  ChatStreamReader reader([&](std::string_view text) { text_bytes += text.size(); }, limits);
  static constexpr int kStatuses[] = {200, 200, 429, 500};
  static constexpr const char* kTypes[] = {"text/event-stream", "application/json", "application/json", "text/plain"};
  reader.start(kStatuses[selector & 3], kTypes[selector & 3]);
  const std::size_t piece = 1 + (selector >> 2);
  bool reading = true;
  for (std::size_t at = 0; at < body.size() && reading; at += piece) reading = reader.receive(body.substr(at, piece));
  require(text_bytes <= body.size());
  const StreamEnd end = reader.end(reading ? "" : "stopped", "http://fuzz/v1");
  require(end.error.has_value() == (end.reason == hearth::FinishReason::kError));
  if (end.error) require(!end.error->message.empty());
  (void)read_model_list(body);
  require(error_body_message(body).size() <= 210);
  if (auto e = parse_endpoint(body)) require(e->base_url.starts_with("http"));
  return 0;
}
