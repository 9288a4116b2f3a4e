// A model whose chat template is a runaway program (issue 14): the request
// that renders it ends with an error naming the limit, cancel() and engine
// shutdown reach a render in progress, and the engine goes on serving.
#include <gtest/gtest.h>

#include <chrono>

#include "engine_test_util.h"
#include "models/loader.h"
#include "synthetic_workload.h"

namespace hearth::testing {
namespace {

using Clock = std::chrono::steady_clock;

// 2**60 macro calls: only the render budget (steps, deadline) or a cancel ends it.
constexpr const char* kExponential =
    "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(60) }}";

std::unique_ptr<Engine> engine_with_template(const std::string& tpl) {
  Result<ModelBundle> bundle = models::load_model(tiny_model_path(), models::LoadOptions{2});
  EXPECT_TRUE(bundle.ok());
  if (!bundle) return nullptr;
  bundle->chat_template = tpl;
  Result<std::unique_ptr<Engine>> engine = Engine::create(std::move(bundle).value(), tiny_options(true));
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

}  // namespace
}  // namespace hearth::testing
