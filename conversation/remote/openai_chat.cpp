#include "conversation/remote/openai_chat.h"

#include <nlohmann/json.hpp>

namespace hearth::remote {
namespace {

using Json = nlohmann::json;

Error malformed(const std::string& what) {
  return make_error(ErrorCode::kCorruptFile, what);
}

// The deepest nesting of arrays and objects outside string literals, counted
// until it passes `limit`.
int nesting(std::string_view text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

Result<Json> parse(std::string_view text, const char* what) {
  if (nesting(text, kMaxJsonDepth) > kMaxJsonDepth) {
    return malformed(std::string(what) + " nests deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  }
  Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return malformed(std::string(what) + " is not JSON: " + printable(text, 120));
  if (!doc.is_object()) return malformed(std::string(what) + " is not a JSON object: " + printable(text, 120));
  return doc;
}

const char* type_name(const Json& v) {
  return v.type_name();
}

// A member that is absent or null reads as nullptr.
const Json* member(const Json& object, const char* name) {
  const auto it = object.find(name);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

Result<std::optional<ServerUsage>> read_usage(const Json& doc, const std::string& where) {
  const Json* u = member(doc, "usage");
  if (!u) return std::optional<ServerUsage>();
  if (!u->is_object()) return malformed(where + "usage is a " + type_name(*u) + ", expected an object");
  ServerUsage usage;
  const auto count = [&](const Json& obj, const char* name, const std::string& path) -> Result<std::int64_t> {
    const Json* v = member(obj, name);
    if (!v) return std::int64_t{-1};
    if (!v->is_number_integer() || v->get<std::int64_t>() < 0) {
      return malformed(where + path + " is " + printable(v->dump(), 40) + ", expected a count");
    }
    return v->get<std::int64_t>();
  };
  HEARTH_ASSIGN_OR_RETURN(usage.prompt_tokens, count(*u, "prompt_tokens", "usage.prompt_tokens"));
  HEARTH_ASSIGN_OR_RETURN(usage.completion_tokens, count(*u, "completion_tokens", "usage.completion_tokens"));
  if (const Json* d = member(*u, "prompt_tokens_details"); d && d->is_object()) {
    HEARTH_ASSIGN_OR_RETURN(usage.cached_tokens,
                            count(*d, "cached_tokens", "usage.prompt_tokens_details.cached_tokens"));
  }
  return std::optional<ServerUsage>(usage);
}

Result<std::optional<FinishReason>> read_finish(const Json& choice, const std::string& where) {
  const Json* f = member(choice, "finish_reason");
  if (!f) return std::optional<FinishReason>();
  if (!f->is_string()) return malformed(where + "finish_reason is a " + type_name(*f) + ", expected a string");
  // "stop", and what else ends an answer normally ("content_filter", "tool_calls"...): only "length" says cut short.
  return std::optional<FinishReason>(f->get<std::string>() == "length" ? FinishReason::kLength : FinishReason::kStop);
}

// choices[0] of a chunk or an answer; nullptr when there are none (a usage-only chunk).
Result<const Json*> first_choice(const Json& doc, const std::string& where) {
  const Json* choices = member(doc, "choices");
  if (!choices) return static_cast<const Json*>(nullptr);
  if (!choices->is_array()) return malformed(where + "choices is a " + type_name(*choices) + ", expected an array");
  if (choices->empty()) return static_cast<const Json*>(nullptr);
  const Json& c = choices->front();
  if (!c.is_object()) return malformed(where + "choices[0] is a " + type_name(c) + ", expected an object");
  return &c;
}

Result<std::string> content_of(const Json& holder, const std::string& path) {
  const Json* content = member(holder, "content");
  if (!content) return std::string();
  if (!content->is_string()) return malformed(path + ".content is a " + type_name(*content) + ", expected a string");
  return content->get<std::string>();
}

std::optional<std::string> error_message_of(const Json& doc) {
  const Json* e = member(doc, "error");
  if (!e) return std::nullopt;
  if (e->is_string()) return printable(e->get<std::string>());
  if (e->is_object()) {
    if (const Json* m = member(*e, "message"); m && m->is_string()) return printable(m->get<std::string>());
  }
  return printable(e->dump());
}

}  // namespace

Result<std::string> chat_request_body(const std::string& model, const Request& request, bool stream) {
  if (request.messages.empty()) {
    return make_error(ErrorCode::kUnsupported,
                      "a remote endpoint takes chat messages only (token ids and raw text need the model's own "
                      "tokenizer)");
  }
  Json messages = Json::array();
  for (const ChatTurn& t : request.messages) messages.push_back({{"role", t.role}, {"content", t.content}});
  const bool continued = !request.continue_text.empty();
  if (continued) messages.push_back({{"role", "assistant"}, {"content", request.continue_text}});
  const SamplingParams& s = request.sampling;
  Json body = {
      {"model", model},
      {"messages", std::move(messages)},
      {"stream", stream},
      {"temperature", s.temperature},
      {"top_p", s.top_p},
      {"max_tokens", request.max_tokens},
      // Two's complement: OpenAI's seed is a signed 64-bit integer (hearth-server reads it back as the same bits).
      {"seed", static_cast<std::int64_t>(s.seed)},
      {"presence_penalty", s.presence_penalty},
      {"frequency_penalty", s.frequency_penalty}};
  if (s.top_k > 0) body["top_k"] = s.top_k;
  if (s.min_p > 0) body["min_p"] = s.min_p;
  if (s.repeat_penalty != 1.0f) {
    body["repetition_penalty"] = s.repeat_penalty;  // vLLM's and hearth-server's name
    body["repeat_penalty"] = s.repeat_penalty;      // llama.cpp's
  }
  if (!request.stop_strings.empty()) body["stop"] = request.stop_strings;
  if (stream) body["stream_options"] = {{"include_usage", true}};
  if (continued) {
    body["continue_final_message"] = true;
    body["add_generation_prompt"] = false;
  }
  return body.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result<ChunkEvent> read_chunk(std::string_view data) {
  ChunkEvent event;
  if (data == "[DONE]") {
    event.done = true;
    return event;
  }
  HEARTH_ASSIGN_OR_RETURN(const Json doc, parse(data, "a streamed chunk"));
  if (auto message = error_message_of(doc)) {
    event.server_error = std::move(message);
    return event;
  }
  HEARTH_ASSIGN_OR_RETURN(event.usage, read_usage(doc, "a chunk's "));
  HEARTH_ASSIGN_OR_RETURN(const Json* choice, first_choice(doc, "a chunk's "));
  if (!choice) return event;
  if (const Json* delta = member(*choice, "delta")) {
    if (!delta->is_object())
      return malformed("a chunk's choices[0].delta is a " + std::string(type_name(*delta)) + ", expected an object");
    HEARTH_ASSIGN_OR_RETURN(event.text, content_of(*delta, "a chunk's choices[0].delta"));
  }
  HEARTH_ASSIGN_OR_RETURN(event.finish, read_finish(*choice, "a chunk's choices[0]."));
  return event;
}

Result<WholeAnswer> read_whole_answer(std::string_view body) {
  HEARTH_ASSIGN_OR_RETURN(const Json doc, parse(body, "the answer"));
  if (auto message = error_message_of(doc)) return make_error(ErrorCode::kIo, "the server said: " + *message);
  WholeAnswer answer;
  HEARTH_ASSIGN_OR_RETURN(answer.usage, read_usage(doc, "the answer's "));
  HEARTH_ASSIGN_OR_RETURN(const Json* choice, first_choice(doc, "the answer's "));
  if (!choice) return malformed("the answer has no choices");
  const Json* message = member(*choice, "message");
  if (!message || !message->is_object()) return malformed("the answer's choices[0].message is missing");
  HEARTH_ASSIGN_OR_RETURN(answer.text, content_of(*message, "the answer's choices[0].message"));
  HEARTH_ASSIGN_OR_RETURN(const std::optional<FinishReason> finish, read_finish(*choice, "the answer's choices[0]."));
  answer.finish = finish.value_or(FinishReason::kStop);
  return answer;
}

std::string error_body_message(std::string_view body) {
  if (body.empty()) return {};
  if (nesting(body, kMaxJsonDepth) <= kMaxJsonDepth) {
    const Json doc = Json::parse(body, nullptr, false);
    if (doc.is_object()) {
      if (auto message = error_message_of(doc)) return *message;
      for (const char* name : {"detail", "message"}) {
        if (const Json* m = member(doc, name)) return printable(m->is_string() ? m->get<std::string>() : m->dump());
      }
    }
  }
  return printable(body);
}

Result<std::vector<ModelEntry>> read_model_entries(std::string_view body) {
  HEARTH_ASSIGN_OR_RETURN(const Json doc, parse(body, "the model list"));
  const Json* data = member(doc, "data");
  if (!data || !data->is_array()) return malformed("the model list has no \"data\" array");
  std::vector<ModelEntry> entries;
  for (std::size_t i = 0; i < data->size(); ++i) {
    const Json& m = (*data)[i];
    const Json* id = m.is_object() ? member(m, "id") : nullptr;
    if (!id || !id->is_string() || id->get<std::string>().empty()) {
      return malformed("the model list's data[" + std::to_string(i) + "] has no \"id\" string");
    }
    const Json* owner = member(m, "owned_by");
    entries.push_back({id->get<std::string>(), owner && owner->is_string() ? owner->get<std::string>() : ""});
  }
  return entries;
}

Result<std::vector<std::string>> read_model_list(std::string_view body) {
  HEARTH_ASSIGN_OR_RETURN(const std::vector<ModelEntry> entries, read_model_entries(body));
  std::vector<std::string> ids;
  for (const ModelEntry& e : entries) ids.push_back(e.id);
  return ids;
}

std::string printable(std::string_view text, std::size_t max) {
  std::string out;
  std::size_t i = 0;
  for (; i < text.size() && out.size() < max; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    out += c < 0x20 || c == 0x7f ? ' ' : static_cast<char>(c);
  }
  if (i < text.size()) {
    // Back off to a UTF-8 boundary (never leave half a character before the mark).
    while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();
    if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xC0) out.pop_back();
    out += "...";
  }
  return out;
}

}  // namespace hearth::remote
