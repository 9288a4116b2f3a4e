// The shapes hearth-server answers with (what OpenAI's clients parse) and the
// Prometheus text of /metrics.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "server/api_response.h"
#include "server/server_metrics.h"

namespace hearth::server {
namespace {

using nlohmann::json;

FinishEvent finish(FinishReason reason) {
  FinishEvent f;
  f.reason = reason;
  f.usage.prompt_tokens = 12;
  f.usage.cached_tokens = 8;
  f.usage.generated_tokens = 3;
  return f;
}

TEST(ApiResponse, ChatCompletionBody) {
  const ResponseContext ctx{Endpoint::kChatCompletions, "chatcmpl-7", 1700000000, "smol"};
  const json j = json::parse(completion_body(ctx, "Paris.", finish(FinishReason::kLength)));
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["id"], "chatcmpl-7");
  EXPECT_EQ(j["model"], "smol");
  EXPECT_EQ(j["created"], 1700000000);
  ASSERT_EQ(j["choices"].size(), 1u);
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(j["choices"][0]["message"]["content"], "Paris.");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(j["usage"]["prompt_tokens"], 12);
  EXPECT_EQ(j["usage"]["completion_tokens"], 3);
  EXPECT_EQ(j["usage"]["total_tokens"], 15);
  EXPECT_EQ(j["usage"]["prompt_tokens_details"]["cached_tokens"], 8);
}

TEST(ApiResponse, TextCompletionBody) {
  const ResponseContext ctx{Endpoint::kCompletions, "cmpl-1", 1, "smol"};
  const json j = json::parse(completion_body(ctx, " there", finish(FinishReason::kStop)));
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["choices"][0]["text"], " there");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
}

TEST(ApiResponse, StreamChunks) {
  const ResponseContext ctx{Endpoint::kChatCompletions, "chatcmpl-2", 1, "smol"};
  const json first = stream_chunk(ctx, "", true, std::nullopt, true);
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["choices"][0]["delta"]["role"], "assistant");
  EXPECT_TRUE(first["choices"][0]["finish_reason"].is_null());
  EXPECT_TRUE(first.contains("usage") && first["usage"].is_null());
  const json piece = stream_chunk(ctx, "Hi", false, std::nullopt, false);
  EXPECT_FALSE(piece["choices"][0]["delta"].contains("role"));
  EXPECT_EQ(piece["choices"][0]["delta"]["content"], "Hi");
  EXPECT_FALSE(piece.contains("usage"));
  const json last = stream_chunk(ctx, "", false, FinishReason::kStop, false);
  EXPECT_EQ(last["choices"][0]["finish_reason"], "stop");
  EXPECT_TRUE(last["choices"][0]["delta"].empty());
  const json usage = usage_chunk(ctx, finish(FinishReason::kStop).usage);
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["prompt_tokens_details"]["cached_tokens"], 8);
  EXPECT_EQ(sse_event(json{{"a", 1}}), "data: {\"a\":1}\n\n");
  EXPECT_EQ(sse_done(), "data: [DONE]\n\n");
}

TEST(ApiResponse, TextThatIsNotUtf8IsReplacedNotThrown) {
  const ResponseContext ctx{Endpoint::kCompletions, "cmpl-3", 1, "smol"};
  std::string out;
  EXPECT_NO_THROW(out = sse_event(stream_chunk(ctx,
                                               "a\xff"
                                               "b",
                                               false, std::nullopt, false)));
  EXPECT_TRUE(json::accept(out.substr(6)));
}

TEST(ServerMetrics, PrometheusText) {
  ServerMetrics m;
  m.count_response("/v1/chat/completions", 200);
  m.count_response("/v1/chat/completions", 200);
  m.count_response("/../../etc/passwd", 404);  // unknown paths share one label
  m.observe_ttft(0.03);
  m.observe_inter_token(0.02, 2);  // two gaps of 10 ms
  m.add_usage(finish(FinishReason::kStop).usage);
  m.count_disconnect();
  EngineStats s;
  s.kv_blocks_used = 3;
  s.kv_blocks_cached = 4;
  s.kv_blocks_free = 5;
  s.running = 2;
  s.memory.weights = 1000;
  const std::string text = m.render(s, ServerGauges{1, 64});
  const auto has = [&](const std::string& line) { return text.find(line + "\n") != std::string::npos; };
  EXPECT_TRUE(has("hearth_http_responses_total{route=\"/v1/chat/completions\",status=\"200\"} 2"));
  EXPECT_TRUE(has("hearth_http_responses_total{route=\"other\",status=\"404\"} 1"));
  EXPECT_TRUE(has("# TYPE hearth_time_to_first_token_seconds histogram"));
  EXPECT_TRUE(has("hearth_time_to_first_token_seconds_bucket{le=\"0.025\"} 0"));
  EXPECT_TRUE(has("hearth_time_to_first_token_seconds_bucket{le=\"0.05\"} 1"));
  EXPECT_TRUE(has("hearth_time_to_first_token_seconds_bucket{le=\"+Inf\"} 1"));
  EXPECT_TRUE(has("hearth_inter_token_latency_seconds_bucket{le=\"0.01\"} 2"));
  EXPECT_TRUE(has("hearth_inter_token_latency_seconds_count 2"));
  EXPECT_TRUE(has("hearth_cached_prompt_tokens_total 8"));
  EXPECT_TRUE(has("hearth_client_disconnects_total 1"));
  EXPECT_TRUE(has("hearth_kv_blocks{state=\"used\"} 3"));
  EXPECT_TRUE(has("hearth_kv_blocks{state=\"cached\"} 4"));
  EXPECT_TRUE(has("hearth_kv_blocks{state=\"free\"} 5"));
  EXPECT_TRUE(has("hearth_requests_running 2"));
  EXPECT_TRUE(has("hearth_memory_bytes{category=\"weights\"} 1000"));
  EXPECT_TRUE(has("hearth_http_active_requests 1"));
  // Every line is a comment or "name{labels} value".
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    ASSERT_NE(end, std::string::npos);
    const std::string line = text.substr(start, end - start);
    EXPECT_TRUE(line.rfind("# ", 0) == 0 || line.rfind("hearth_", 0) == 0) << line;
    EXPECT_NE(line.find(' '), std::string::npos) << line;
    start = end + 1;
  }
}

}  // namespace
}  // namespace hearth::server
