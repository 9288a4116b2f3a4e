// The request parser of hearth-server: what a valid body becomes, and for
// each hostile or malformed body the status, the field named and the code.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "server/api_request.h"
#include "server/json_fields.h"

namespace hearth::server {
namespace {

constexpr Endpoint kChat = Endpoint::kChatCompletions;
constexpr Endpoint kText = Endpoint::kCompletions;

ApiRequest parse_ok(Endpoint e, const std::string& body) {
  ApiResult<ApiRequest> r = parse_request(e, body, ParseLimits{});
  EXPECT_TRUE(r.ok()) << body << " -> " << (r.ok() ? "" : r.error().message);
  return r.ok() ? std::move(r).value() : ApiRequest{};
}

const std::string kUser = R"("messages": [{"role": "user", "content": "Hi"}])";

TEST(ApiRequest, MinimalChatGetsOpenAiDefaults) {
  const ApiRequest r = parse_ok(kChat, R"({"model": "m", )" + kUser + "}");
  EXPECT_EQ(r.model, "m");
  ASSERT_EQ(r.engine.messages.size(), 1u);
  EXPECT_EQ(r.engine.messages[0].role, "user");
  EXPECT_EQ(r.engine.messages[0].content, "Hi");
  EXPECT_FLOAT_EQ(r.engine.sampling.temperature, 1.0f);
  EXPECT_FLOAT_EQ(r.engine.sampling.top_p, 1.0f);
  EXPECT_EQ(r.engine.sampling.top_k, 0);
  EXPECT_FLOAT_EQ(r.engine.sampling.min_p, 0.0f);
  EXPECT_FALSE(r.stream);
  EXPECT_FALSE(r.max_tokens.has_value());
  EXPECT_FALSE(r.seed_given);
}

TEST(ApiRequest, EveryHonouredParameterArrives) {
  const ApiRequest r = parse_ok(kChat, R"({"model": "m", )" + kUser + R"(,
      "temperature": 0, "top_p": 0.5, "max_tokens": 7, "max_completion_tokens": 9, "stop": ["\n", "END"],
      "seed": -3, "presence_penalty": 0.5, "frequency_penalty": -1.5, "n": 1, "stream": true,
      "stream_options": {"include_usage": true}, "top_k": 5, "min_p": 0.1, "repetition_penalty": 1.1,
      "user": "ignored", "logprobs": false, "tools": [], "response_format": {"type": "text"}})");
  EXPECT_FLOAT_EQ(r.engine.sampling.temperature, 0.0f);
  EXPECT_FLOAT_EQ(r.engine.sampling.top_p, 0.5f);
  EXPECT_EQ(r.max_tokens, 9);  // max_completion_tokens wins over the older max_tokens
  EXPECT_EQ(r.engine.stop_strings, (std::vector<std::string>{"\n", "END"}));
  EXPECT_TRUE(r.seed_given);
  EXPECT_EQ(r.engine.sampling.seed, static_cast<std::uint64_t>(-3));
  EXPECT_FLOAT_EQ(r.engine.sampling.presence_penalty, 0.5f);
  EXPECT_FLOAT_EQ(r.engine.sampling.frequency_penalty, -1.5f);
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_EQ(r.engine.sampling.top_k, 5);
  EXPECT_FLOAT_EQ(r.engine.sampling.min_p, 0.1f);
  EXPECT_FLOAT_EQ(r.engine.sampling.repeat_penalty, 1.1f);
}

TEST(ApiRequest, NullMeansNotGiven) {
  const ApiRequest r = parse_ok(kChat, R"({"model": "m", )" + kUser +
                                           R"(, "temperature": null, "stop": null, "seed": null, "max_tokens": null,
                                           "stream_options": null, "n": null})");
  EXPECT_FLOAT_EQ(r.engine.sampling.temperature, 1.0f);
  EXPECT_TRUE(r.engine.stop_strings.empty());
  EXPECT_FALSE(r.seed_given);
  EXPECT_FALSE(r.max_tokens.has_value());
}

TEST(ApiRequest, ContentPartsJoinAndDeveloperIsSystem) {
  const ApiRequest r = parse_ok(kChat, R"({"model": "m", "messages": [
      {"role": "developer", "content": "Be brief."},
      {"role": "user", "content": [{"type": "text", "text": "Hello, "}, {"type": "text", "text": "world"}]},
      {"role": "assistant", "content": null}]})");
  ASSERT_EQ(r.engine.messages.size(), 3u);
  EXPECT_EQ(r.engine.messages[0].role, "system");
  EXPECT_EQ(r.engine.messages[1].content, "Hello, world");
  EXPECT_EQ(r.engine.messages[2].content, "");
}

TEST(ApiRequest, PromptForms) {
  EXPECT_EQ(parse_ok(kText, R"({"model": "m", "prompt": "Once"})").engine.prompt_text, "Once");
  EXPECT_EQ(parse_ok(kText, R"({"model": "m", "prompt": ["Once"]})").engine.prompt_text, "Once");
  EXPECT_EQ(parse_ok(kText, R"({"model": "m", "prompt": [1, 2, 3]})").engine.prompt_tokens,
            (std::vector<std::int32_t>{1, 2, 3}));
  EXPECT_EQ(parse_ok(kText, R"({"model": "m", "prompt": [[4, 5]]})").engine.prompt_tokens,
            (std::vector<std::int32_t>{4, 5}));
  EXPECT_EQ(parse_ok(kText, R"({"model": "m", "prompt": "a", "stop": "x"})").engine.stop_strings,
            (std::vector<std::string>{"x"}));
}

struct BadCase {
  Endpoint endpoint;
  std::string body;
  std::string param;  // "" = null
  std::string code;
};

std::string chat(const std::string& extra) {
  return R"({"model": "m", )" + kUser + ", " + extra + "}";
}
std::string text(const std::string& extra) {
  return R"({"model": "m", )" + extra + "}";
}

TEST(ApiRequest, HostileAndMalformedBodiesAre400NamingTheField) {
  const std::string deep = std::string(100, '[') + std::string(100, ']');
  const std::vector<BadCase> cases = {
      {kChat, "", "", "invalid_json"},
      {kChat, "{", "", "invalid_json"},
      {kChat, "[]", "", "invalid_json"},
      {kChat, "\"model\"", "", "invalid_json"},
      {kChat, "{\"model\": \"m\"} trailing", "", "invalid_json"},
      {kChat, "{\"model\": \"\xff\xfe\"}", "", "invalid_json"},  // not UTF-8
      {kChat, "{\"a\": " + deep + "}", "", "invalid_json"},
      {kChat, "{\"model\": NaN}", "", "invalid_json"},
      {kChat, "{" + kUser + "}", "model", "missing_required_parameter"},
      {kChat, R"({"model": 5, )" + kUser + "}", "model", "invalid_type"},
      {kChat, R"({"model": "m"})", "messages", "missing_required_parameter"},
      {kChat, R"({"model": "m", "messages": "Hi"})", "messages", "invalid_type"},
      {kChat, R"({"model": "m", "messages": []})", "messages", "invalid_value"},
      {kChat, R"({"model": "m", "messages": [5]})", "messages[0]", "invalid_type"},
      {kChat, R"({"model": "m", "messages": [{"content": "x"}]})", "messages[0].role", "missing_required_parameter"},
      {kChat, R"({"model": "m", "messages": [{"role": "wizard", "content": "x"}]})", "messages[0].role",
       "invalid_value"},
      {kChat, R"({"model": "m", "messages": [{"role": "user", "content": 5}]})", "messages[0].content", "invalid_type"},
      {kChat, R"({"model": "m", "messages": [{"role": "user", "content": [{"type": "image_url"}]}]})",
       "messages[0].content[0].type", "unsupported_parameter"},
      {kChat, R"({"model": "m", "messages": [{"role": "user", "content": [{"type": "text", "text": 1}]}]})",
       "messages[0].content[0].text", "invalid_type"},
      {kChat, R"({"model": "m", "messages": [{"role": "assistant", "content": "", "tool_calls": [{"id": "x"}]}]})",
       "messages[0].tool_calls", "unsupported_parameter"},
      {kChat, chat(R"("temperature": "hot")"), "temperature", "invalid_type"},
      {kChat, chat(R"("temperature": 3)"), "temperature", "invalid_value"},
      {kChat, chat(R"("temperature": -0.5)"), "temperature", "invalid_value"},
      {kChat, chat(R"("temperature": 1e999)"), "", "invalid_json"},  // out of double range
      {kChat, chat(R"("top_p": 0)"), "top_p", "invalid_value"},
      {kChat, chat(R"("top_p": 1.5)"), "top_p", "invalid_value"},
      {kChat, chat(R"("max_tokens": 0)"), "max_tokens", "invalid_value"},
      {kChat, chat(R"("max_tokens": -5)"), "max_tokens", "invalid_value"},
      {kChat, chat(R"("max_tokens": 1.5)"), "max_tokens", "invalid_type"},
      {kChat, chat(R"("max_tokens": "10")"), "max_tokens", "invalid_type"},
      {kChat, chat(R"("max_tokens": 18446744073709551615)"), "max_tokens", "invalid_value"},
      {kChat, chat(R"("max_tokens": 1e300)"), "max_tokens", "invalid_type"},
      {kChat, chat(R"("max_completion_tokens": true)"), "max_completion_tokens", "invalid_type"},
      {kChat, chat(R"("n": 2)"), "n", "unsupported_parameter"},
      {kChat, chat(R"("n": "1")"), "n", "invalid_type"},
      {kChat, chat(R"("stop": 5)"), "stop", "invalid_type"},
      {kChat, chat(R"("stop": [""])"), "stop[0]", "invalid_value"},
      {kChat, chat(R"("stop": ["a", 1])"), "stop[1]", "invalid_type"},
      {kChat, chat(R"("stop": ["a", "b", "c", "d", "e"])"), "stop", "invalid_value"},
      {kChat, chat(R"("stop": ")" + std::string(300, 'x') + "\""), "stop", "invalid_value"},
      {kChat, chat(R"("seed": 1.5)"), "seed", "invalid_type"},
      {kChat, chat(R"("seed": "7")"), "seed", "invalid_type"},
      {kChat, chat(R"("presence_penalty": 2.5)"), "presence_penalty", "invalid_value"},
      {kChat, chat(R"("frequency_penalty": [])"), "frequency_penalty", "invalid_type"},
      {kChat, chat(R"("stream": "yes")"), "stream", "invalid_type"},
      {kChat, chat(R"("stream_options": {"include_usage": true})"), "stream_options", "invalid_value"},
      {kChat, chat(R"("stream": true, "stream_options": 5)"), "stream_options", "invalid_type"},
      {kChat, chat(R"("stream": true, "stream_options": {"include_usage": 1})"), "stream_options.include_usage",
       "invalid_type"},
      {kChat, chat(R"("logprobs": true)"), "logprobs", "unsupported_parameter"},
      {kChat, chat(R"("tools": [{"type": "function"}])"), "tools", "unsupported_parameter"},
      {kChat, chat(R"("response_format": {"type": "json_object"})"), "response_format", "unsupported_parameter"},
      {kChat, chat(R"("logit_bias": {"1": 5})"), "logit_bias", "unsupported_parameter"},
      {kChat, chat(R"("add_generation_prompt": false)"), "add_generation_prompt", "unsupported_parameter"},
      {kChat, chat(R"("continue_final_message": "yes")"), "continue_final_message", "invalid_type"},
      {kChat, chat(R"("continue_final_message": true)"), "messages", "invalid_value"},  // the last is the user's
      {kChat, chat(R"("continue_final_message": true, "add_generation_prompt": true)"), "add_generation_prompt",
       "invalid_value"},
      {kChat, R"({"model": "m", "messages": [{"role": "assistant", "content": "x"}], "continue_final_message": true})",
       "messages", "invalid_value"},
      {kText, R"({"model": "m"})", "prompt", "missing_required_parameter"},
      {kText, text(R"("prompt": 5)"), "prompt", "invalid_type"},
      {kText, text(R"("prompt": "")"), "prompt", "invalid_value"},
      {kText, text(R"("prompt": [])"), "prompt", "invalid_value"},
      {kText, text(R"("prompt": ["a", "b"])"), "prompt", "unsupported_parameter"},
      {kText, text(R"("prompt": [1, -1])"), "prompt[1]", "invalid_value"},
      {kText, text(R"("prompt": [1, 2.5])"), "prompt[1]", "invalid_type"},
      {kText, text(R"("prompt": [1, 99999999999])"), "prompt[1]", "invalid_value"},
      {kText, text(R"("prompt": [[1], [2]])"), "prompt", "unsupported_parameter"},
      {kText, text(R"("prompt": [{"a": 1}])"), "prompt[0]", "invalid_type"},
      {kText, text(R"("prompt": "a", "echo": true)"), "echo", "unsupported_parameter"},
      {kText, text(R"("prompt": "a", "best_of": 3)"), "best_of", "unsupported_parameter"},
      {kText, text(R"("prompt": "a", "suffix": "z")"), "suffix", "unsupported_parameter"},
      {kText, text(R"("prompt": "a", "logprobs": 5)"), "logprobs", "unsupported_parameter"},
  };
  for (const BadCase& c : cases) {
    ApiResult<ApiRequest> r = parse_request(c.endpoint, c.body, ParseLimits{});
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_EQ(r.error().status, 400) << c.body;
    EXPECT_EQ(r.error().param, c.param) << c.body << ": " << r.error().message;
    EXPECT_EQ(r.error().code, c.code) << c.body << ": " << r.error().message;
    EXPECT_EQ(r.error().type, "invalid_request_error") << c.body;
    EXPECT_FALSE(r.error().message.empty()) << c.body;
    if (!c.param.empty()) {
      EXPECT_NE(r.error().message.find(c.param), std::string::npos) << r.error().message;
    }
  }
}

// vLLM's continuation fields: the last, assistant message becomes the text the
// answer goes on from (the engine's continue_text), not a turn of its own.
TEST(ApiRequest, ContinueFinalMessageContinuesTheAssistantsPartialAnswer) {
  const ApiRequest r = parse_ok(kChat, R"({"model": "m", "messages": [{"role": "user", "content": "Count"},
      {"role": "assistant", "content": "One, two,"}], "continue_final_message": true,
      "add_generation_prompt": false})");
  ASSERT_EQ(r.engine.messages.size(), 1u);
  EXPECT_EQ(r.engine.messages[0].content, "Count");
  EXPECT_EQ(r.engine.continue_text, "One, two,");
  // Without the flag an assistant message last is a turn of the conversation, as before.
  const ApiRequest plain = parse_ok(kChat, R"({"model": "m", "messages": [{"role": "user", "content": "Count"},
      {"role": "assistant", "content": "One"}], "continue_final_message": false, "add_generation_prompt": true})");
  EXPECT_EQ(plain.engine.messages.size(), 2u);
  EXPECT_TRUE(plain.engine.continue_text.empty());
}

TEST(ApiRequest, MessageCountAndDepthLimitsAreTheServers) {
  ParseLimits limits;
  limits.max_messages = 2;
  limits.max_depth = 4;
  const std::string three = R"({"model": "m", "messages": [{"role": "user", "content": "a"},
      {"role": "user", "content": "b"}, {"role": "user", "content": "c"}]})";
  ApiResult<ApiRequest> r = parse_request(kChat, three, limits);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().param, "messages");
  EXPECT_NE(r.error().message.find("limit is 2"), std::string::npos) << r.error().message;
  // body > messages > message > content > part: 5 deep.
  const std::string parts =
      R"({"model": "m", "messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}]})";
  EXPECT_FALSE(parse_request(kChat, parts, limits).ok());
  limits.max_depth = 5;
  EXPECT_TRUE(parse_request(kChat, parts, limits).ok());
}

TEST(JsonDepth, CountsOutsideStringsOnly) {
  EXPECT_EQ(json_depth("{}", 10), 1);
  EXPECT_EQ(json_depth(R"({"a": [[1], {"b": []}]})", 10), 4);
  EXPECT_EQ(json_depth(R"({"a": "[[[[{{{{"})", 10), 1);
  EXPECT_EQ(json_depth(R"({"a": "\"[[[["})", 10), 1);        // an escaped quote does not end the string
  EXPECT_EQ(json_depth(std::string(1000000, '['), 64), 65);  // stops early
  EXPECT_EQ(json_depth("]]]]{", 10), 1);
}

TEST(ApiError, BodyIsOpenAisShape) {
  const nlohmann::json j = nlohmann::json::parse(bad_request("top_p", "'top_p' must be...").body());
  ASSERT_TRUE(j.contains("error"));
  EXPECT_EQ(j["error"]["type"], "invalid_request_error");
  EXPECT_EQ(j["error"]["param"], "top_p");
  EXPECT_EQ(j["error"]["code"], "invalid_value");
  EXPECT_EQ(j["error"]["message"], "'top_p' must be...");
  const nlohmann::json m = nlohmann::json::parse(malformed_json("x").body());
  EXPECT_TRUE(m["error"]["param"].is_null());
  // A message quoting bytes that are not UTF-8 still serializes.
  EXPECT_TRUE(nlohmann::json::accept(bad_request("p", "bad \xff byte").body()));
}

}  // namespace
}  // namespace hearth::server
