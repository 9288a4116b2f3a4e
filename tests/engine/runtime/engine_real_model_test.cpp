// The engine on the real default model (SmolLM2-135M-Instruct): chat prompts
// through its template and tokenizer, stop strings on real token boundaries,
// prefix reuse across turns. Short greedy generations keep it fast.
#include <gtest/gtest.h>

#include "engine_test_util.h"

namespace hearth::testing {
namespace {

Request chat(std::vector<ChatTurn> messages, std::int32_t max_tokens) {
  Request r;
  r.messages = std::move(messages);
  r.sampling.temperature = 0;
  r.max_tokens = max_tokens;
  return r;
}

EngineOptions options(bool prefix_cache) {
  EngineOptions o;
  o.context_length = 2048;
  o.max_sequences = 4;
  o.prefix_cache = prefix_cache;
  return o;
}

bool ascii(const std::string& s) {
  for (const char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

TEST(EngineRealModel, StopStringAcrossATokenBoundaryIsNeverEmitted) {
  auto engine = make_engine(default_model_path(), options(true));
  ASSERT_NE(engine, nullptr);
  const Request base = chat({{"user", "Write two sentences about the sea."}}, 24);
  auto sink = std::make_shared<RecordingSink>();
  engine->submit(base, sink);
  const FinishEvent full = sink->wait();
  const std::vector<TextEvent> events = sink->events();
  const std::string text = sink->text();
  ASSERT_GE(events.size(), 8u);
  // A stop string made of the end of one token's text and the start of the next.
  std::string stop;
  std::size_t k = 3;
  for (; k + 1 < events.size(); ++k) {
    const std::string& a = events[k].text;
    const std::string& b = events[k + 1].text;
    if (a.size() >= 2 && b.size() >= 2 && ascii(a) && ascii(b)) {
      stop = a.substr(a.size() - 2) + b.substr(0, 2);
      break;
    }
  }
  ASSERT_FALSE(stop.empty()) << "no two adjacent multi-character tokens in: " << text;
  const std::size_t at = text.find(stop);
  ASSERT_NE(at, std::string::npos);

  Request with_stop = base;
  with_stop.stop_strings = {"never appears \x01", stop};
  auto stopped = std::make_shared<RecordingSink>();
  engine->submit(with_stop, stopped);
  const FinishEvent f = stopped->wait();
  EXPECT_EQ(f.reason, FinishReason::kStop);
  EXPECT_EQ(stopped->text(), text.substr(0, at)) << "stop '" << stop << "'";
  for (const TextEvent& e : stopped->events()) EXPECT_EQ(e.text.find(stop), std::string::npos);
  // Same tokens up to the one completing the stop string, then nothing more.
  ASSERT_LE(f.generated_token_ids.size(), full.generated_token_ids.size());
  EXPECT_TRUE(std::equal(f.generated_token_ids.begin(), f.generated_token_ids.end(), full.generated_token_ids.begin()));
  EXPECT_LE(f.generated_token_ids.size(), k + 2);
  expect_idle_kv(*engine);
}

// Three turns of one conversation; each turn's answer goes back into the history.
std::vector<Outcome> converse(Engine& engine) {
  const std::vector<std::string> questions = {"What is the capital of France?", "And of Italy?",
                                              "Which of the two is larger?"};
  std::vector<ChatTurn> history = {{"system", "You are a concise assistant."}};
  std::vector<Outcome> out;
  for (const std::string& q : questions) {
    history.push_back({"user", q});
    out.push_back(run_alone(engine, {chat(history, 16)})[0]);
    history.push_back({"assistant", out.back().text});
  }
  return out;
}

TEST(EngineRealModel, MultiTurnChatReusesThePrefixWithIdenticalGreedyText) {
  auto off = make_engine(default_model_path(), options(false));
  auto on = make_engine(default_model_path(), options(true));
  ASSERT_TRUE(off && on);
  const std::vector<Outcome> ref = converse(*off);
  const std::vector<Outcome> cached = converse(*on);
  ASSERT_EQ(ref.size(), cached.size());
  for (std::size_t t = 0; t < ref.size(); ++t) {
    SCOPED_TRACE("turn " + std::to_string(t));
    EXPECT_FALSE(ref[t].text.empty());
    EXPECT_EQ(ref[t].text, cached[t].text);
    EXPECT_EQ(ref[t].finish.generated_token_ids, cached[t].finish.generated_token_ids);
    EXPECT_EQ(ref[t].finish.usage.cached_tokens, 0);
    if (t > 0) {
      EXPECT_GE(cached[t].finish.usage.cached_tokens, 32);
    }
  }
  EXPECT_GT(on->stats().prefix_hit_rate, 0.3);
  expect_idle_kv(*on);
}

TEST(EngineRealModel, ConcurrentChatsMatchTheirSoloRuns) {
  auto engine = make_engine(default_model_path(), options(true));
  ASSERT_NE(engine, nullptr);
  std::vector<Request> requests = {
      chat({{"user", "Name a color."}}, 12),
      chat({{"user", "Count from one to five."}}, 20),
      chat({{"system", "Answer in French."}, {"user", "How are you today?"}}, 16),
      chat({{"user", "Write a haiku about autumn leaves falling in the wind."}}, 24),
  };
  auto solo_engine = make_engine(default_model_path(), options(false));
  ASSERT_NE(solo_engine, nullptr);
  const std::vector<Outcome> solo = run_alone(*solo_engine, requests);
  const std::vector<Outcome> together = run_together(*engine, requests);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    SCOPED_TRACE("request " + std::to_string(i));
    EXPECT_EQ(solo[i].finish.generated_token_ids, together[i].finish.generated_token_ids);
    EXPECT_EQ(solo[i].text, together[i].text);
    EXPECT_GT(together[i].finish.usage.ttft_ms, 0);
  }
  expect_idle_kv(*engine);
}

}  // namespace
}  // namespace hearth::testing
