// The client's side of OpenAI's chat API, without any HTTP: the request body
// for a hearth::Request, and what the server's bytes mean: one streamed chunk
// (`data: {...}` of /v1/chat/completions with "stream": true), a whole
// non-streamed answer, an error body, the /v1/models list. Everything read
// here came over the network: every value is type-checked, nesting is
// bounded, and each error names the field that was wrong.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hearth/engine.h"
#include "hearth/result.h"

namespace hearth::remote {

// Deeper JSON from a server is refused before it is parsed.
inline constexpr int kMaxJsonDepth = 32;

// The JSON body of POST /chat/completions for `request` (its messages; token
// ids or raw text are refused: a remote server has its own tokenizer).
// OpenAI's own sampling parameters (temperature, top_p, seed,
// presence_penalty, frequency_penalty) are always sent; top_k, min_p and
// repetition_penalty (also spelled repeat_penalty, as llama.cpp's server
// reads it), which OpenAI's own API refuses, only when they are on. A
// continued answer (request.continue_text) is sent as vLLM spells it: the
// partial answer as a last assistant message, with continue_final_message
// true and add_generation_prompt false; only a server that honours those
// may be sent one (RemoteOptions::continues_answers).
Result<std::string> chat_request_body(const std::string& model, const Request& request, bool stream);

// The usage a server reported ("usage" of the last chunk or of the answer).
struct ServerUsage {
  std::int64_t prompt_tokens = -1;  // -1: not reported
  std::int64_t completion_tokens = -1;
  std::int64_t cached_tokens = -1;  // prompt_tokens_details.cached_tokens
};

// One streamed chunk, read.
struct ChunkEvent {
  bool done = false;                        // the "[DONE]" sentinel
  std::string text;                         // choices[0].delta.content ("" when absent or null)
  std::optional<FinishReason> finish;       // choices[0].finish_reason once given
  std::optional<ServerUsage> usage;         // a chunk's non-null "usage"
  std::optional<std::string> server_error;  // {"error": {...}} sent inside the stream
};
Result<ChunkEvent> read_chunk(std::string_view data);

// A non-streamed answer (a server that ignored "stream": true answers so).
struct WholeAnswer {
  std::string text;
  FinishReason finish = FinishReason::kStop;
  std::optional<ServerUsage> usage;
};
Result<WholeAnswer> read_whole_answer(std::string_view body);

// The message of an error response: OpenAI's {"error": {"message"}} (or
// {"error": "text"}, {"detail": ...}, {"message": ...} of other servers), else the
// body's start as printable text; "" for an empty body.
std::string error_body_message(std::string_view body);

// One model of GET /models: its id and "owned_by" ("" when absent).
struct ModelEntry {
  std::string id;
  std::string owned_by;  // hearth-server says "hearth"
};
// The models of GET /models ({"data": [{"id": ..., "owned_by": ...}, ...]}), in its order.
Result<std::vector<ModelEntry>> read_model_entries(std::string_view body);
// Their ids only.
Result<std::vector<std::string>> read_model_list(std::string_view body);

// `text` made safe to show in one line: control bytes replaced, cut to `max` bytes
// (at a UTF-8 boundary) with "..." when longer.
std::string printable(std::string_view text, std::size_t max = 200);

}  // namespace hearth::remote
