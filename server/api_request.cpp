#include "server/api_request.h"

#include <limits>

#include "server/json_fields.h"

namespace hearth::server {
namespace {

constexpr std::int64_t kMaxTokens = std::numeric_limits<std::int32_t>::max();

ApiError unsupported(const std::string& param, const std::string& what) {
  return bad_request(param, "'" + param + "': " + what + " is not supported by this server", "unsupported_parameter");
}

// One message's content: a string, or an array of {"type": "text", "text": ...}
// parts (joined). Null is an empty content (an assistant turn that only called tools).
ApiResult<std::string> message_content(const Fields& f) {
  const Json* c = f.find("content");
  const std::string path = f.path_of("content");
  if (!c) return std::string();
  if (c->is_string()) return c->get<std::string>();
  if (!c->is_array()) return f.wrong_type(path, *c, "a string or an array of text parts");
  std::string text;
  for (std::size_t i = 0; i < c->size(); ++i) {
    const Json& part = (*c)[i];
    const std::string part_path = path + "[" + std::to_string(i) + "]";
    if (!part.is_object()) return f.wrong_type(part_path, part, "an object");
    const Fields pf(part, part_path);
    HEARTH_API_ASSIGN(std::optional<std::string> type, pf.string("type"));
    if (type.value_or("") != "text") {
      return unsupported(pf.path_of("type"), "A content part of type '" + type.value_or("") + "'");
    }
    HEARTH_API_ASSIGN(const Json* t, pf.required("text"));
    if (!t->is_string()) return pf.wrong_type(pf.path_of("text"), *t, "a string");
    text += t->get<std::string>();
  }
  return text;
}

ApiResult<ChatTurn> parse_message(const Json& m, const std::string& path) {
  const Fields f(m, path);
  if (!m.is_object()) return f.wrong_type(path, m, "an object");
  HEARTH_API_ASSIGN(const Json* role_value, f.required("role"));
  if (!role_value->is_string()) return f.wrong_type(f.path_of("role"), *role_value, "a string");
  std::string role = role_value->get<std::string>();
  // "developer" is OpenAI's newer name for the system turn; templates know "system".
  if (role == "developer") role = "system";
  if (role != "system" && role != "user" && role != "assistant" && role != "tool") {
    return bad_request(
        f.path_of("role"),
        "'" + f.path_of("role") + "' must be one of system, developer, user, assistant, tool; got '" + role + "'");
  }
  if (const Json* calls = f.find("tool_calls"); calls && !(calls->is_array() && calls->empty())) {
    return unsupported(f.path_of("tool_calls"), "Tool calling");
  }
  if (f.find("function_call")) return unsupported(f.path_of("function_call"), "Function calling");
  HEARTH_API_ASSIGN(std::string content, message_content(f));
  return ChatTurn{std::move(role), std::move(content)};
}

ApiResult<bool> parse_messages(const Fields& f, const ParseLimits& limits, Request& out) {
  HEARTH_API_ASSIGN(const Json* messages, f.required("messages"));
  if (!messages->is_array()) return f.wrong_type("messages", *messages, "an array of messages");
  if (messages->empty()) return bad_request("messages", "'messages' must hold at least one message");
  if (messages->size() > limits.max_messages) {
    return bad_request("messages", "'messages' holds " + std::to_string(messages->size()) +
                                       " messages; the server's limit is " + std::to_string(limits.max_messages));
  }
  for (std::size_t i = 0; i < messages->size(); ++i) {
    HEARTH_API_ASSIGN(ChatTurn turn, parse_message((*messages)[i], "messages[" + std::to_string(i) + "]"));
    out.messages.push_back(std::move(turn));
  }
  return true;
}

// vLLM's continuation fields: `continue_final_message: true` with
// `add_generation_prompt: false` makes the last message (an assistant's
// partial answer) the start of the answer, continued from: it becomes the
// engine's continue_text, after the generation prompt. Without
// continue_final_message the generation prompt is always added, so `false`
// alone is refused rather than ignored.
ApiResult<bool> parse_continuation(const Fields& f, Request& out) {
  HEARTH_API_ASSIGN(std::optional<bool> continue_final, f.boolean("continue_final_message"));
  HEARTH_API_ASSIGN(std::optional<bool> generation_prompt, f.boolean("add_generation_prompt"));
  if (!continue_final.value_or(false)) {
    if (!generation_prompt.value_or(true)) {
      return unsupported("add_generation_prompt", "'add_generation_prompt': false without 'continue_final_message'");
    }
    return true;
  }
  if (generation_prompt.value_or(false)) {
    return bad_request("add_generation_prompt",
                       "'continue_final_message' and 'add_generation_prompt' cannot both be true");
  }
  if (out.messages.back().role != "assistant") {
    return bad_request("messages",
                       "with 'continue_final_message' the last of 'messages' must be the assistant's "
                       "partial answer (it is the " +
                           out.messages.back().role + "'s)");
  }
  out.continue_text = std::move(out.messages.back().content);
  out.messages.pop_back();
  if (out.messages.empty()) {
    return bad_request("messages",
                       "with 'continue_final_message', 'messages' needs a message before the "
                       "assistant's partial answer");
  }
  return true;
}

// Token ids of a prompt given as an array of integers.
ApiResult<std::vector<std::int32_t>> token_ids(const Fields& f, const Json& array, const std::string& path) {
  std::vector<std::int32_t> ids;
  for (std::size_t i = 0; i < array.size(); ++i) {
    const Json& t = array[i];
    const std::string item = path + "[" + std::to_string(i) + "]";
    if (!t.is_number_integer()) return f.wrong_type(item, t, "a token id (an integer)");
    if (t.is_number_unsigned() ? t.get<std::uint64_t>() > kMaxTokens : t.get<std::int64_t>() < 0) {
      return bad_request(item, "'" + item + "' is not a token id: " + describe_value(t));
    }
    ids.push_back(static_cast<std::int32_t>(t.get<std::int64_t>()));
  }
  return ids;
}

// "prompt": a string, one string in an array, token ids, or one array of token ids.
ApiResult<bool> parse_prompt(const Fields& f, Request& out) {
  HEARTH_API_ASSIGN(const Json* p, f.required("prompt"));
  const Json* one = p;
  if (p->is_array() && !p->empty() && (p->front().is_string() || p->front().is_array())) {
    if (p->size() != 1) return unsupported("prompt", "More than one prompt per request (a batch)");
    one = &p->front();
  }
  const std::string path = one == p ? "prompt" : "prompt[0]";
  if (one->is_string()) {
    out.prompt_text = one->get<std::string>();
  } else if (one->is_array()) {
    HEARTH_API_ASSIGN(out.prompt_tokens, token_ids(f, *one, path));
  } else {
    return f.wrong_type(path, *one, "a string, or an array of token ids");
  }
  if (out.prompt_text.empty() && out.prompt_tokens.empty()) return bad_request(path, "'" + path + "' is empty");
  return true;
}

ApiResult<bool> parse_stop(const Fields& f, const ParseLimits& limits, Request& out) {
  const Json* stop = f.find("stop");
  if (!stop) return true;
  std::vector<const Json*> items;
  if (stop->is_string()) {
    items.push_back(stop);
  } else if (stop->is_array()) {
    if (stop->size() > limits.max_stop) {
      return bad_request("stop", "'stop' holds " + std::to_string(stop->size()) + " sequences; at most " +
                                     std::to_string(limits.max_stop) + " are allowed");
    }
    for (const Json& s : *stop) items.push_back(&s);
  } else {
    return f.wrong_type("stop", *stop, "a string or an array of strings");
  }
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string path = stop->is_array() ? "stop[" + std::to_string(i) + "]" : "stop";
    if (!items[i]->is_string()) return f.wrong_type(path, *items[i], "a string");
    std::string s = items[i]->get<std::string>();
    if (s.empty()) return bad_request(path, "'" + path + "' is an empty string");
    if (s.size() > limits.max_stop_bytes) {
      return bad_request(path, "'" + path + "' is longer than " + std::to_string(limits.max_stop_bytes) + " bytes");
    }
    out.stop_strings.push_back(std::move(s));
  }
  return true;
}

// Parameters this server refuses rather than ignores: ignoring them would
// return something other than what the client asked for.
ApiResult<bool> refuse_unsupported(const Fields& f, Endpoint endpoint) {
  HEARTH_API_ASSIGN(std::optional<std::int64_t> n, f.integer("n", 1, 128));
  if (n && *n != 1) return unsupported("n", "'n' other than 1");
  if (endpoint == Endpoint::kCompletions) {
    HEARTH_API_ASSIGN(std::optional<std::int64_t> best_of, f.integer("best_of", 1, 128));
    if (best_of && *best_of != 1) return unsupported("best_of", "'best_of' other than 1");
    HEARTH_API_ASSIGN(std::optional<bool> echo, f.boolean("echo"));
    if (echo.value_or(false)) return unsupported("echo", "'echo'");
    if (f.find("suffix")) return unsupported("suffix", "'suffix'");
  }
  if (const Json* lp = f.find("logprobs"); lp && !(lp->is_boolean() && !lp->get<bool>())) {
    return unsupported("logprobs", "'logprobs'");
  }
  if (f.find("top_logprobs")) return unsupported("top_logprobs", "'top_logprobs'");
  if (const Json* tools = f.find("tools"); tools && !(tools->is_array() && tools->empty())) {
    return unsupported("tools", "Tool calling");
  }
  if (f.find("functions")) return unsupported("functions", "Function calling");
  if (const Json* bias = f.find("logit_bias"); bias && !(bias->is_object() && bias->empty())) {
    return unsupported("logit_bias", "'logit_bias'");
  }
  if (const Json* format = f.find("response_format")) {
    if (!format->is_object() || format->value("type", "") != "text") {
      return unsupported("response_format", "A 'response_format' other than {\"type\": \"text\"}");
    }
  }
  return true;
}

ApiResult<bool> parse_sampling(const Fields& f, ApiRequest& out) {
  SamplingParams& s = out.engine.sampling;
  s = SamplingParams{.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .min_p = 0.0f};
  HEARTH_API_ASSIGN(std::optional<double> temperature, f.number("temperature", 0.0, 2.0));
  HEARTH_API_ASSIGN(std::optional<double> top_p, f.number("top_p", 0.0, 1.0));
  HEARTH_API_ASSIGN(std::optional<double> presence, f.number("presence_penalty", -2.0, 2.0));
  HEARTH_API_ASSIGN(std::optional<double> frequency, f.number("frequency_penalty", -2.0, 2.0));
  HEARTH_API_ASSIGN(std::optional<std::int64_t> top_k, f.integer("top_k", -1, 1 << 20));
  HEARTH_API_ASSIGN(std::optional<double> min_p, f.number("min_p", 0.0, 1.0));
  HEARTH_API_ASSIGN(std::optional<double> repetition, f.number("repetition_penalty", 0.01, 10.0));
  HEARTH_API_ASSIGN(std::optional<std::int64_t> seed, f.integer("seed", std::numeric_limits<std::int64_t>::min(),
                                                                std::numeric_limits<std::int64_t>::max()));
  if (top_p && *top_p <= 0.0) return bad_request("top_p", "'top_p' must be greater than 0");
  if (temperature) s.temperature = static_cast<float>(*temperature);
  if (top_p) s.top_p = static_cast<float>(*top_p);
  if (presence) s.presence_penalty = static_cast<float>(*presence);
  if (frequency) s.frequency_penalty = static_cast<float>(*frequency);
  if (top_k) s.top_k = *top_k < 0 ? 0 : static_cast<std::int32_t>(*top_k);  // -1: off (vLLM's spelling)
  if (min_p) s.min_p = static_cast<float>(*min_p);
  if (repetition) s.repeat_penalty = static_cast<float>(*repetition);
  if (seed) s.seed = static_cast<std::uint64_t>(*seed);
  out.seed_given = seed.has_value();
  return true;
}

ApiResult<bool> parse_stream(const Fields& f, ApiRequest& out) {
  HEARTH_API_ASSIGN(std::optional<bool> stream, f.boolean("stream"));
  out.stream = stream.value_or(false);
  const Json* options = f.find("stream_options");
  if (!options) return true;
  if (!options->is_object()) return f.wrong_type("stream_options", *options, "an object");
  if (!out.stream) {
    return bad_request("stream_options", "'stream_options' is only allowed when 'stream' is true");
  }
  HEARTH_API_ASSIGN(std::optional<bool> usage, Fields(*options, "stream_options").boolean("include_usage"));
  out.include_usage = usage.value_or(false);
  return true;
}

ApiResult<bool> parse_limits(const Fields& f, ApiRequest& out) {
  HEARTH_API_ASSIGN(std::optional<std::int64_t> max_tokens, f.integer("max_tokens", 1, kMaxTokens));
  HEARTH_API_ASSIGN(std::optional<std::int64_t> max_completion, f.integer("max_completion_tokens", 1, kMaxTokens));
  if (max_completion) max_tokens = max_completion;
  if (max_tokens) out.max_tokens = static_cast<std::int32_t>(*max_tokens);
  return true;
}

}  // namespace

ApiResult<ApiRequest> parse_request(Endpoint endpoint, std::string_view body, const ParseLimits& limits) {
  HEARTH_API_ASSIGN(const Json doc, parse_object(body, limits.max_depth));
  const Fields f(doc, "");
  ApiRequest out;
  out.endpoint = endpoint;
  HEARTH_API_ASSIGN(const Json* model, f.required("model"));
  if (!model->is_string()) return f.wrong_type("model", *model, "a string");
  out.model = model->get<std::string>();
  if (endpoint == Endpoint::kChatCompletions) {
    HEARTH_API_TRY(parse_messages(f, limits, out.engine));
    HEARTH_API_TRY(parse_continuation(f, out.engine));
  } else {
    HEARTH_API_TRY(parse_prompt(f, out.engine));
  }
  for (auto step : {parse_sampling, parse_stream, parse_limits}) {
    HEARTH_API_TRY(step(f, out));
  }
  HEARTH_API_TRY(refuse_unsupported(f, endpoint));
  HEARTH_API_TRY(parse_stop(f, limits, out.engine));
  return out;
}

}  // namespace hearth::server
