// A model whose chat template is a runaway program (issue 14): the request
// that renders it ends with an error naming the limit, cancel() and engine
// shutdown reach a render in progress, and the engine goes on serving.
#include <gtest/gtest.h>

#include <chrono>
#include <limits>

#include "engine_test_util.h"
#include "models/loader.h"
#include "synthetic_workload.h"

namespace hearth::testing {
namespace {

using Clock = std::chrono::steady_clock;

// 2**60 macro calls: only the render budget (steps, deadline) or a cancel ends it.
constexpr const char* kExponential =
    "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(60) }}";

std::unique_ptr<Engine> engine_with_template(const std::string& tpl, EngineOptions options = tiny_options(true)) {
  Result<ModelBundle> bundle = models::load_model(tiny_model_path(), models::LoadOptions{2});
  EXPECT_TRUE(bundle.ok());
  if (!bundle) return nullptr;
  bundle->chat_template = tpl;
  Result<std::unique_ptr<Engine>> engine = Engine::create(std::move(bundle).value(), options);
  EXPECT_TRUE(engine.ok());
  if (!engine) return nullptr;
  return std::move(engine).value();
}

Request chat_request() {
  Request r;
  r.messages = {{"user", "hello"}};
  r.max_tokens = 2;
  return r;
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

TEST(EngineHostileTemplate, RunawayTemplateEndsThatRequestWithALimitErrorAndTheEngineGoesOn) {
  auto engine = engine_with_template(kExponential);
  ASSERT_NE(engine, nullptr);
  const std::vector<Outcome> bad = run_alone(*engine, {chat_request()});
  EXPECT_EQ(bad[0].finish.reason, FinishReason::kError);
  ASSERT_TRUE(bad[0].finish.error.has_value());
  const std::string& msg = bad[0].finish.error->message;
  EXPECT_TRUE(msg.find("max_steps") != std::string::npos || msg.find("deadline") != std::string::npos) << msg;
  EXPECT_NE(msg.find("line 1"), std::string::npos) << msg;
  const std::vector<Outcome> good = run_alone(*engine, {greedy_tokens({10, 11, 12}, 2)});
  EXPECT_EQ(good[0].finish.reason, FinishReason::kLength);
  expect_idle_kv(*engine);
}

TEST(EngineHostileTemplate, CancelReachesARenderBeforeItsDeadline) {
  auto engine = engine_with_template(kExponential);
  ASSERT_NE(engine, nullptr);
  auto sink = std::make_shared<RecordingSink>();
  const RequestId id = engine->submit(chat_request(), sink);
  const auto t0 = Clock::now();
  engine->cancel(id);
  const FinishEvent done = sink->wait(std::chrono::seconds(30));
  EXPECT_EQ(done.reason, FinishReason::kCancelled);
  EXPECT_LT(seconds_since(t0), 2.5);  // the render deadline is 5 s
  const std::vector<Outcome> good = run_alone(*engine, {greedy_tokens({10, 11, 12}, 2)});
  EXPECT_EQ(good[0].finish.reason, FinishReason::kLength);
}

TEST(EngineHostileTemplate, ShutdownDuringARenderIsPrompt) {
  auto engine = engine_with_template(kExponential);
  ASSERT_NE(engine, nullptr);
  auto sink = std::make_shared<RecordingSink>();
  engine->submit(chat_request(), sink);
  const auto t0 = Clock::now();
  engine.reset();
  EXPECT_LT(seconds_since(t0), 2.5);
  EXPECT_EQ(sink->finish_count(), 1);
}

// A budget only a cancel can exhaust: the runaway template renders until then.
EngineOptions endless_render_options() {
  EngineOptions options = tiny_options(true);
  options.template_max_steps = std::numeric_limits<std::uint64_t>::max();
  options.template_deadline = std::chrono::hours(1);
  return options;
}

TEST(EngineHostileTemplate, ARenderInProgressDoesNotStallTheRunningRequests) {
  auto engine = engine_with_template(kExponential, endless_render_options());
  ASSERT_NE(engine, nullptr);
  auto stuck = std::make_shared<RecordingSink>();
  const RequestId id = engine->submit(chat_request(), stuck);
  // Were the render on the engine loop, this request would wait an hour (the
  // helper fails the test after two minutes).
  const std::vector<Outcome> meanwhile = run_alone(*engine, {greedy_tokens({10, 11, 12}, 24)});
  EXPECT_EQ(meanwhile[0].finish.reason, FinishReason::kLength);
  EXPECT_EQ(meanwhile[0].finish.usage.generated_tokens, 24);
  EXPECT_EQ(stuck->finish_count(), 0);  // still rendering: only a cancel ends it
  engine->cancel(id);
  EXPECT_EQ(stuck->wait(std::chrono::seconds(60)).reason, FinishReason::kCancelled);
  expect_idle_kv(*engine);
}

TEST(EngineHostileTemplate, ACancelledChatRequestWaitingBehindARenderEndsAtOnce) {
  auto engine = engine_with_template(kExponential, endless_render_options());
  ASSERT_NE(engine, nullptr);
  auto stuck = std::make_shared<RecordingSink>();
  auto queued = std::make_shared<RecordingSink>();
  const RequestId first = engine->submit(chat_request(), stuck);
  const RequestId second = engine->submit(chat_request(), queued);
  engine->cancel(second);
  EXPECT_EQ(queued->wait(std::chrono::seconds(60)).reason, FinishReason::kCancelled);
  EXPECT_EQ(stuck->finish_count(), 0);
  engine->cancel(first);
  EXPECT_EQ(stuck->wait(std::chrono::seconds(60)).reason, FinishReason::kCancelled);
  // The engine still renders and serves chat requests afterwards.
  const std::vector<Outcome> tokens = run_alone(*engine, {greedy_tokens({10, 11, 12}, 2)});
  EXPECT_EQ(tokens[0].finish.reason, FinishReason::kLength);
}

TEST(EngineHostileTemplate, ShutdownFinishesEveryRequestStillWaitingForItsRender) {
  auto engine = engine_with_template(kExponential, endless_render_options());
  ASSERT_NE(engine, nullptr);
  std::vector<std::shared_ptr<RecordingSink>> sinks;
  std::vector<Engine::Submission> batch;
  for (int i = 0; i < 3; ++i) {
    sinks.push_back(std::make_shared<RecordingSink>());
    batch.push_back({i == 1 ? greedy_tokens({10, 11}, 4) : chat_request(), sinks.back()});
  }
  engine->submit_all(std::move(batch));
  auto later = std::make_shared<RecordingSink>();
  engine->submit(chat_request(), later);
  engine.reset();  // cancels the render in progress; nothing is left unanswered
  for (const auto& sink : sinks) EXPECT_EQ(sink->finish_count(), 1);
  // The chat requests were never rendered to the end; the token one (handed
  // over with its batch) may have run before the engine stopped.
  EXPECT_EQ(sinks[0]->wait(std::chrono::seconds(1)).reason, FinishReason::kCancelled);
  EXPECT_EQ(sinks[2]->wait(std::chrono::seconds(1)).reason, FinishReason::kCancelled);
  EXPECT_EQ(later->finish_count(), 1);
  EXPECT_EQ(later->wait(std::chrono::seconds(1)).reason, FinishReason::kCancelled);
}

// The app's Continue: the answer so far is written after the generation prompt
// and tokenized with the rendered chat, by the engine (off its loop).
TEST(EngineContinue, ContinueTextFollowsTheGenerationPrompt) {
  auto engine = engine_with_template(
      "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}"
      "{% if add_generation_prompt %}<|assistant|>{% endif %}");
  ASSERT_NE(engine, nullptr);
  Request continued = chat_request();
  continued.continue_text = "so far";
  continued.max_tokens = 6;
  continued.sampling.temperature = 0;
  continued.ignore_eos = true;
  Result<std::string> chat = engine->render_chat(continued.messages, true);
  ASSERT_TRUE(chat.ok());
  Result<std::vector<std::int32_t>> ids = engine->tokenize(*chat + "so far", false, true);
  ASSERT_TRUE(ids.ok());
  Result<std::vector<std::int32_t>> specials = engine->tokenize("", true, false);
  ASSERT_TRUE(specials.ok());
  if (!specials->empty() && (ids->empty() || ids->front() != specials->front())) {
    ids->insert(ids->begin(), specials->front());
  }
  Request by_hand = greedy_tokens(*ids, 6);
  const std::vector<Outcome> both = run_alone(*engine, {continued, by_hand});
  EXPECT_EQ(both[0].finish.usage.prompt_tokens, static_cast<std::int32_t>(ids->size()));
  EXPECT_EQ(both[0].text, both[1].text);
  EXPECT_EQ(both[0].finish.reason, FinishReason::kLength);
}

}  // namespace
}  // namespace hearth::testing
