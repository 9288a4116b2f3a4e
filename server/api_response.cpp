#include "server/api_response.h"

namespace hearth::server {
namespace {

using Json = nlohmann::json;

std::string dump(const Json& j) {
  // Model text is UTF-8 by the engine's contract; replace rather than throw if a
  // byte-level token ever breaks it.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Json envelope(const ResponseContext& ctx, const char* object) {
  return {{"id", ctx.id},
          {"object", object},
          {"created", ctx.created},
          {"model", ctx.model},
          {"system_fingerprint", nullptr}};
}

bool is_chat(const ResponseContext& ctx) {
  return ctx.endpoint == Endpoint::kChatCompletions;
}

}  // namespace

const char* openai_finish_reason(FinishReason reason) {
  return reason == FinishReason::kLength ? "length" : "stop";
}

Json usage_json(const Usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.generated_tokens},
          {"total_tokens", u.prompt_tokens + u.generated_tokens},
          {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}}};
}

Json timings_json(const Usage& u) {
  return {
      {"ttft_ms", u.ttft_ms}, {"prefill_tps", u.prefill_tps}, {"decode_tps", u.decode_tps}, {"total_ms", u.total_ms}};
}

std::string completion_body(const ResponseContext& ctx, const std::string& text, const FinishEvent& finish) {
  Json choice = {{"index", 0}, {"logprobs", nullptr}, {"finish_reason", openai_finish_reason(finish.reason)}};
  Json out;
  if (is_chat(ctx)) {
    choice["message"] = {{"role", "assistant"}, {"content", text}, {"refusal", nullptr}};
    out = envelope(ctx, "chat.completion");
  } else {
    choice["text"] = text;
    out = envelope(ctx, "text_completion");
  }
  out["choices"] = Json::array({std::move(choice)});
  out["usage"] = usage_json(finish.usage);
  out["timings"] = timings_json(finish.usage);
  return dump(out);
}

Json stream_chunk(const ResponseContext& ctx, std::string_view text, bool first, std::optional<FinishReason> finish,
                  bool include_usage) {
  Json choice = {{"index", 0}, {"logprobs", nullptr}};
  choice["finish_reason"] = finish ? Json(openai_finish_reason(*finish)) : Json(nullptr);
  Json out;
  if (is_chat(ctx)) {
    Json delta = Json::object();
    if (first) delta["role"] = "assistant";
    if (!text.empty() || !finish) delta["content"] = text;
    choice["delta"] = std::move(delta);
    out = envelope(ctx, "chat.completion.chunk");
  } else {
    choice["text"] = text;
    out = envelope(ctx, "text_completion");
  }
  out["choices"] = Json::array({std::move(choice)});
  if (include_usage) out["usage"] = nullptr;
  return out;
}

Json usage_chunk(const ResponseContext& ctx, const Usage& usage) {
  Json out = envelope(ctx, is_chat(ctx) ? "chat.completion.chunk" : "text_completion");
  out["choices"] = Json::array();
  out["usage"] = usage_json(usage);
  out["timings"] = timings_json(usage);
  return out;
}

std::string sse_event(const Json& payload) {
  return "data: " + dump(payload) + "\n\n";
}

std::string sse_done() {
  return "data: [DONE]\n\n";
}

}  // namespace hearth::server
