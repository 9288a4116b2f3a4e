// The body of POST /v1/chat/completions and POST /v1/completions, checked and
// turned into the engine's Request. Every parameter this server honours is
// validated (type and range, the field named in the error); parameters it
// cannot honour (n > 1, tools, logprobs, echo...) are refused with a 400 rather
// than silently ignored; members it does not know are ignored, as OpenAI's
// clients send extras.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "hearth/engine.h"
#include "server/api_error.h"

namespace hearth::server {

enum class Endpoint { kChatCompletions, kCompletions };

struct ParseLimits {
  int max_depth = 32;                // nesting of arrays and objects in the body
  std::size_t max_messages = 1024;   // chat turns per request
  std::size_t max_stop = 4;          // stop sequences (OpenAI's limit)
  std::size_t max_stop_bytes = 256;  // bytes per stop sequence
};

struct ApiRequest {
  Endpoint endpoint = Endpoint::kChatCompletions;
  std::string model;
  // messages (chat), or prompt_text / prompt_tokens (completions); sampling;
  // stop_strings. max_tokens is left at the engine's default: see below.
  Request engine;
  std::optional<std::int32_t> max_tokens;  // max_completion_tokens, else max_tokens; unset: the server's default
  bool seed_given = false;                 // unseeded requests get a fresh seed from the server
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage: a last chunk with the usage
};

// Parses and validates a request body. Sampling defaults follow OpenAI's
// (temperature 1, top_p 1, no top-k / min-p); top_k, min_p and
// repetition_penalty are accepted as extensions (vLLM's names), and so are
// vLLM's continue_final_message with add_generation_prompt false (the last,
// assistant message is continued: engine.continue_text).
ApiResult<ApiRequest> parse_request(Endpoint endpoint, std::string_view body, const ParseLimits& limits);

}  // namespace hearth::server
