// What the server answers, in OpenAI's shapes: a whole chat.completion or
// text_completion object, and the server-sent events of a stream
// (chat.completion.chunk / text_completion chunks, the usage chunk of
// stream_options.include_usage, then "data: [DONE]"). The field names are an
// interface (README, "HTTP server"): add fields, never rename.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "hearth/engine.h"
#include "server/api_request.h"

namespace hearth::server {

struct ResponseContext {
  Endpoint endpoint = Endpoint::kChatCompletions;
  std::string id;            // "chatcmpl-N" or "cmpl-N": the same in every chunk of a stream
  std::int64_t created = 0;  // Unix seconds when the request arrived
  std::string model;         // the served model's id
};

// "stop" or "length" (what OpenAI's clients know); the engine's other
// reasons never reach a successful response.
const char* openai_finish_reason(FinishReason reason);

// {"prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details": {"cached_tokens"}}
nlohmann::json usage_json(const Usage& usage);
// The engine's own measurements ("timings": ttft_ms, prefill_tps, decode_tps, total_ms): an extension.
nlohmann::json timings_json(const Usage& usage);

// The body of a non-streamed answer.
std::string completion_body(const ResponseContext& ctx, const std::string& text, const FinishEvent& finish);

// One stream chunk carrying `text` (chat: the first one also carries the
// assistant role) and, on the last, the finish reason. With include_usage
// every chunk has "usage": null, as OpenAI's do.
nlohmann::json stream_chunk(const ResponseContext& ctx, std::string_view text, bool first,
                            std::optional<FinishReason> finish, bool include_usage);
// The extra last chunk of stream_options.include_usage: no choices, the usage.
nlohmann::json usage_chunk(const ResponseContext& ctx, const Usage& usage);

// "data: <json>\n\n"
std::string sse_event(const nlohmann::json& payload);
// "data: [DONE]\n\n"
std::string sse_done();

}  // namespace hearth::server
