// An answer's response read byte by byte: chunks, [DONE], usage, a stream cut
// mid-way, an error status with OpenAI's body, malformed chunks (each error
// names its cause), a non-streamed JSON answer; and the request body.
#include "conversation/remote/chat_stream.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "conversation/remote/endpoint.h"

namespace hearth::remote {
namespace {

std::string chunk(const std::string& content, const char* finish = nullptr) {
  nlohmann::json c = {{"id", "x"},
                      {"object", "chat.completion.chunk"},
                      {"choices", {{{"index", 0}, {"delta", {{"content", content}}}, {"finish_reason", nullptr}}}}};
  if (finish) c["choices"][0]["finish_reason"] = finish;
  return "data: " + c.dump() + "\n\n";
}

struct Read {
  std::string text;
  StreamEnd end;
  std::size_t pieces = 0;
};

// Feeds `body` in pieces of `step` bytes after a response with `status`.
Read read(int status, const std::string& type, const std::string& body, const std::string& transport = {},
          std::size_t step = 7, StreamLimits limits = {}) {
  Read r;
  ChatStreamReader reader(
      [&](std::string_view t) {
        r.text += t;
        ++r.pieces;
      },
      limits);
  reader.start(status, type);
  for (std::size_t at = 0; at < body.size(); at += step) {
    if (!reader.receive(std::string_view(body).substr(at, step))) break;
  }
  r.end = reader.end(transport, "http://h:1/v1");
  return r;
}

bool says(const StreamEnd& end, const std::string& part) {
  return end.error && end.error->message.find(part) != std::string::npos;
}

TEST(ChatStream, StreamWithDoneAndUsage) {
  const std::string usage =
      R"(data: {"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":8}}})"
      "\n\n";
  const Read r =
      read(200, "text/event-stream", chunk("Hel") + chunk("lo") + chunk("!", "stop") + usage + "data: [DONE]\n\n");
  EXPECT_EQ(r.text, "Hello!");
  EXPECT_EQ(r.pieces, 3u);
  EXPECT_EQ(r.end.reason, FinishReason::kStop);
  EXPECT_FALSE(r.end.error);
  ASSERT_TRUE(r.end.usage);
  EXPECT_EQ(r.end.usage->prompt_tokens, 12);
  EXPECT_EQ(r.end.usage->completion_tokens, 3);
  EXPECT_EQ(r.end.usage->cached_tokens, 8);
}

TEST(ChatStream, LengthFinishAndNoDoneIsStillComplete) {
  const Read r = read(200, "text/event-stream", chunk("a") + chunk("", "length"));
  EXPECT_EQ(r.end.reason, FinishReason::kLength);
  EXPECT_FALSE(r.end.error);
}

TEST(ChatStream, CutMidStreamKeepsTheTextAndSaysSo) {
  const std::string body = chunk("Once") + chunk(" upon") + "data: {\"choices\":[{\"delta\":{\"content\":\" a t";
  const Read r = read(200, "text/event-stream", body);
  EXPECT_EQ(r.text, "Once upon");
  EXPECT_EQ(r.end.reason, FinishReason::kError);
  EXPECT_TRUE(says(r.end, "was cut before the answer finished")) << r.end.error->message;
  EXPECT_TRUE(says(r.end, "the server closed it"));
  const Read broken = read(200, "text/event-stream", chunk("x"), "Failed to read connection");
  EXPECT_TRUE(says(broken.end, "Failed to read connection"));
}

TEST(ChatStream, ErrorStatusesNameTheCauseAndTheServersMessage) {
  const std::string openai = R"({"error":{"message":"Incorrect API key","type":"invalid_request_error"}})";
  const Read unauthorised = read(401, "application/json", openai);
  EXPECT_EQ(unauthorised.end.reason, FinishReason::kError);
  EXPECT_TRUE(says(unauthorised.end, "refused the API key (HTTP 401: Incorrect API key)"))
      << unauthorised.end.error->message;
  EXPECT_TRUE(says(read(429, "application/json", openai).end, "rate-limiting or overloaded (HTTP 429"));
  EXPECT_TRUE(says(read(503, "text/plain", "busy\n").end, "failed (HTTP 503: busy"));
  EXPECT_TRUE(says(read(422, "application/json", R"({"detail":[{"msg":"bad"}]})").end, "HTTP 422"));
  // A huge error body is cut, not held.
  StreamLimits small;
  small.max_error_body_bytes = 100;
  const Read huge = read(500, "text/html", std::string(1 << 20, 'x'), {}, 4096, small);
  ASSERT_TRUE(huge.end.error);
  EXPECT_LT(huge.end.error->message.size(), 400u);
}

TEST(ChatStream, UnreachableSaysSo) {
  ChatStreamReader reader([](std::string_view) {});
  const StreamEnd end = reader.end("Could not establish connection", "http://127.0.0.1:9/v1");
  EXPECT_EQ(end.reason, FinishReason::kError);
  EXPECT_EQ(end.error->message, "cannot reach http://127.0.0.1:9/v1: Could not establish connection");
}

TEST(ChatStream, MalformedChunksStopWithTheirCause) {
  const struct {
    std::string body;
    std::string names;
  } cases[] = {
      {"data: {not json\n\n", "is not JSON"},
      {"data: [1,2]\n\n", "is not a JSON object"},
      {R"(data: {"choices":{}})"
       "\n\n",
       "choices is a object, expected an array"},
      {R"(data: {"choices":[{"delta":{"content":5}}]})"
       "\n\n",
       "delta.content is a number"},
      {R"(data: {"choices":[{"delta":"x"}]})"
       "\n\n",
       "delta is a string"},
      {R"(data: {"choices":[{"finish_reason":3}]})"
       "\n\n",
       "finish_reason is a number"},
      {R"(data: {"usage":{"prompt_tokens":-4}})"
       "\n\n",
       "usage.prompt_tokens is -4"},
      {"data: " + std::string(100, '[') + "\n\n", "nests deeper than"},
  };
  for (const auto& c : cases) {
    const Read r = read(200, "text/event-stream", chunk("ok") + c.body + chunk("never"));
    EXPECT_EQ(r.text, "ok") << c.body;
    EXPECT_EQ(r.end.reason, FinishReason::kError);
    EXPECT_TRUE(says(r.end, "malformed data from http://h:1/v1")) << c.body;
    EXPECT_TRUE(says(r.end, c.names)) << r.end.error->message;
  }
  StreamLimits tiny;
  tiny.sse.max_line_bytes = 1000;
  const Read huge = read(200, "text/event-stream", chunk("ok") + "data: " + std::string(1 << 20, 'x'), {}, 65536, tiny);
  EXPECT_TRUE(says(huge.end, "longer than 1000 bytes")) << huge.end.error->message;
}

TEST(ChatStream, ServerErrorInsideTheStream) {
  const Read r = read(200, "text/event-stream",
                      chunk("par") + R"(data: {"error":{"message":"out of memory"}})"
                                     "\n\n");
  EXPECT_EQ(r.text, "par");
  EXPECT_TRUE(says(r.end, "reported an error mid-answer: out of memory"));
}

TEST(ChatStream, WholeJsonAnswer) {
  const std::string body =
      R"({"choices":[{"message":{"role":"assistant","content":"Hi there"},"finish_reason":"length"}],)"
      R"("usage":{"prompt_tokens":5,"completion_tokens":2}})";
  const Read r = read(200, "application/json; charset=utf-8", body);
  EXPECT_EQ(r.text, "Hi there");  // the answer's text reaches the caller like a stream's
  EXPECT_EQ(r.end.reason, FinishReason::kLength);
  EXPECT_FALSE(r.end.error);
  EXPECT_EQ(r.end.usage->completion_tokens, 2);
  EXPECT_TRUE(says(read(200, "application/json", "{\"choices\":[]}").end, "has no choices"));
}

TEST(ChatRequest, BodyCarriesMessagesSamplingAndStops) {
  Request req;
  req.messages = {{"system", "Be brief."}, {"user", "Hi"}};
  req.sampling.temperature = 0.0f;
  req.sampling.top_k = 0;
  req.sampling.min_p = 0.0f;
  req.sampling.seed = ~std::uint64_t{0};
  req.max_tokens = 16;
  req.stop_strings = {"\n\n"};
  auto body = chat_request_body("m", req, true);
  ASSERT_TRUE(body);
  const auto j = nlohmann::json::parse(*body);
  EXPECT_EQ(j["model"], "m");
  EXPECT_EQ(j["messages"].size(), 2u);
  EXPECT_EQ(j["messages"][1]["content"], "Hi");
  EXPECT_EQ(j["max_tokens"], 16);
  EXPECT_EQ(j["seed"], -1);  // the same 64 bits, signed
  EXPECT_EQ(j["stop"][0], "\n\n");
  EXPECT_TRUE(j["stream_options"]["include_usage"]);
  EXPECT_FALSE(j.contains("top_k"));  // off: not sent (OpenAI's own API refuses the name)
  EXPECT_FALSE(j.contains("repeat_penalty"));
  req.sampling.top_k = 40;
  req.sampling.repeat_penalty = 1.1f;
  const auto k = nlohmann::json::parse(*chat_request_body("m", req, false));
  EXPECT_EQ(k["top_k"], 40);
  EXPECT_TRUE(k.contains("repetition_penalty") && k.contains("repeat_penalty"));
  EXPECT_FALSE(k.contains("stream_options"));
  Request tokens;
  tokens.prompt_tokens = {1, 2};
  EXPECT_FALSE(chat_request_body("m", tokens, true));
  EXPECT_FALSE(j.contains("continue_final_message"));  // a new answer: the server adds its generation prompt
  // A continued answer: the partial text as the last, assistant message, flagged as vLLM spells it.
  req.continue_text = "Once upon";
  const auto c = nlohmann::json::parse(*chat_request_body("m", req, true));
  ASSERT_EQ(c["messages"].size(), 3u);
  EXPECT_EQ(c["messages"][2], (nlohmann::json{{"role", "assistant"}, {"content", "Once upon"}}));
  EXPECT_EQ(c["continue_final_message"], true);
  EXPECT_EQ(c["add_generation_prompt"], false);
}

TEST(ModelList, ReadsIdsAndRefusesJunk) {
  auto ids = read_model_list(R"({"object":"list","data":[{"id":"a"},{"id":"b","owned_by":"x"}]})");
  ASSERT_TRUE(ids);
  EXPECT_EQ(*ids, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(read_model_list(R"({"data":[{"name":"a"}]})"));
  EXPECT_FALSE(read_model_list(R"({"models":[]})"));
  EXPECT_FALSE(read_model_list("<html>"));
  auto entries = read_model_entries(R"({"data":[{"id":"a"},{"id":"b","owned_by":"hearth"},{"id":"c","owned_by":7}]})");
  ASSERT_TRUE(entries);
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ((*entries)[0].owned_by, "");
  EXPECT_EQ((*entries)[1].owned_by, "hearth");
  EXPECT_EQ((*entries)[2].owned_by, "");  // not a string: no owner
}

TEST(Endpoint, NormalisesAndRefuses) {
  const struct {
    const char* url;
    const char* base;
    const char* origin;
  } good[] = {
      {"http://127.0.0.1:8080", "http://127.0.0.1:8080/v1", "http://127.0.0.1:8080"},
      {"http://127.0.0.1:8080/", "http://127.0.0.1:8080/v1", "http://127.0.0.1:8080"},
      {"HTTPS://API.Example.com/v1/", "https://api.example.com/v1", "https://api.example.com"},
      {"http://gpu:8000/openai/v1", "http://gpu:8000/openai/v1", "http://gpu:8000"},
      {"http://[::1]:11434/v1", "http://[::1]:11434/v1", "http://[::1]:11434"},
  };
  for (const auto& g : good) {
    auto e = parse_endpoint(g.url, "k");
    ASSERT_TRUE(e) << g.url << ": " << e.error().message;
    EXPECT_EQ(e->base_url, g.base);
    EXPECT_EQ(e->origin, g.origin);
    EXPECT_EQ(e->api_key, "k");
  }
  for (const char* bad : {"127.0.0.1:8080", "ftp://h/v1", "http://", "http://:80", "http://h:0", "http://h:99999",
                          "http://h:x", "http://user:pw@h/v1", "http://h/v1?x=1", "http://h /v1", "http://[::1"}) {
    auto e = parse_endpoint(bad);
    EXPECT_FALSE(e) << bad;
    if (!e) {
      EXPECT_NE(e.error().message.find(bad), std::string::npos) << e.error().message;
    }
  }
}

}  // namespace
}  // namespace hearth::remote
