// libFuzzer harness for hearth-server's request handling: the input's first
// byte picks the endpoint (chat or text completions), the rest is the HTTP
// body. It is parsed and validated as the server does; an accepted request
// must satisfy what the handlers rely on, and its answer shapes must
// serialize; a refused one must be a 4xx with OpenAI's error body. Errors are
// fine; crashes, sanitizer reports, hangs and runaway memory are not.
// Seeds: fuzz/openai_request_seeds/ (fuzz/run.sh prefixes each with both endpoint bytes).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "server/api_request.h"
#include "server/api_response.h"

namespace {

using namespace hearth::server;

void require(bool ok) {
  if (!ok) __builtin_trap();
}

void check_accepted(const ApiRequest& r) {
  if (r.endpoint == Endpoint::kChatCompletions) {
    require(!r.engine.messages.empty());
  } else {
    require(!r.engine.prompt_text.empty() || !r.engine.prompt_tokens.empty());
    for (const std::int32_t id : r.engine.prompt_tokens) require(id >= 0);
  }
  require(r.engine.stop_strings.size() <= ParseLimits{}.max_stop);
  for (const auto& s : r.engine.stop_strings) require(!s.empty());
  require(!r.max_tokens || *r.max_tokens >= 1);
  require(r.include_usage == false || r.stream);
  const auto& s = r.engine.sampling;
  require(s.temperature >= 0.0f && s.temperature <= 2.0f && s.top_p > 0.0f && s.top_p <= 1.0f);
  // The answer shapes serialize whatever the request held (the model name is
  // the server's, but text may be anything the model produced).
  const ResponseContext ctx{r.endpoint, "id", 0, r.model};
  hearth::FinishEvent finish;
  const std::string text = r.engine.messages.empty() ? r.engine.prompt_text : r.engine.messages.back().content;
  require(nlohmann::json::accept(completion_body(ctx, text, finish)));
  require(nlohmann::json::accept(sse_event(stream_chunk(ctx, text, true, std::nullopt, true)).substr(6)));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const Endpoint endpoint = (data[0] & 1) ? Endpoint::kCompletions : Endpoint::kChatCompletions;
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  ApiResult<ApiRequest> parsed = parse_request(endpoint, body, ParseLimits{});
  if (parsed) {
    check_accepted(parsed.value());
    return 0;
  }
  const ApiError& e = parsed.error();
  require(e.status >= 400 && e.status < 500 && !e.message.empty() && !e.type.empty());
  require(nlohmann::json::accept(e.body()));
  return 0;
}
