// The engine on a tiny synthetic model (random weights: only exactness and
// bookkeeping matter here, not the text). Greedy decoding makes outputs
// deterministic, so "same tokens" is an exact check.
#include <gtest/gtest.h>

#include <cstdlib>

#include <algorithm>
#include <atomic>
#include <random>

#include "engine/model/model.h"
#include "engine_test_util.h"
#include "models/loader.h"
#include "synthetic_workload.h"

namespace hearth::testing {
namespace {

void expect_same_generations(const std::vector<Outcome>& a, const std::vector<Outcome>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE("request " + std::to_string(i));
    EXPECT_EQ(a[i].finish.reason, FinishReason::kLength);
    EXPECT_EQ(b[i].finish.reason, FinishReason::kLength);
    EXPECT_EQ(a[i].finish.generated_token_ids, b[i].finish.generated_token_ids);
  }
}

TEST(EngineSynthetic, SixteenConcurrentRequestsMatchTheirSoloRuns) {
  Rng rng;
  SCOPED_TRACE("seed " + std::to_string(rng.seed));
  std::vector<Request> requests;
  for (int i = 0; i < 16; ++i) requests.push_back(greedy_tokens(rng.tokens(rng.between(1, 150)), rng.between(4, 24)));
  auto solo_engine = make_engine(tiny_model_path(), tiny_options(false));
  ASSERT_NE(solo_engine, nullptr);
  const std::vector<Outcome> solo = run_alone(*solo_engine, requests);
  auto engine = make_engine(tiny_model_path(), tiny_options(false));
  ASSERT_NE(engine, nullptr);
  const std::vector<Outcome> together = run_together(*engine, requests);
  expect_same_generations(solo, together);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(together[i].finish.usage.generated_tokens, requests[i].max_tokens);
    EXPECT_EQ(together[i].finish.usage.prompt_tokens, static_cast<int>(requests[i].prompt_tokens.size()));
  }
  EXPECT_GE(engine->stats().steps, 1);
  expect_idle_kv(*engine);
}

TEST(EngineSynthetic, PrefixCacheOnAndOffGiveTheSameGreedyOutputs) {
  Rng rng;
  SCOPED_TRACE("seed " + std::to_string(rng.seed));
  auto off = make_engine(tiny_model_path(), tiny_options(false));
  auto on = make_engine(tiny_model_path(), tiny_options(true));
  // Tiny pool: 24 blocks of 16 tokens for 4 conversations of up to ~200 tokens: eviction and preemption.
  auto tiny = make_engine(tiny_model_path(), tiny_options(true, tiny_kv_blocks_bytes(24)));
  ASSERT_TRUE(off && on && tiny);
  Rng r1 = rng, r2 = rng, r3 = rng;
  const auto ref = run_conversations(*off, r1, 4, 4, false);
  const auto cached = run_conversations(*on, r2, 4, 4, false);
  const auto squeezed = run_conversations(*tiny, r3, 4, 4, true);
  for (std::size_t t = 0; t < ref.size(); ++t) {
    SCOPED_TRACE("turn " + std::to_string(t));
    expect_same_generations(ref[t], cached[t]);
    expect_same_generations(ref[t], squeezed[t]);
    for (const Outcome& o : ref[t]) EXPECT_EQ(o.finish.usage.cached_tokens, 0);
    if (t > 0) {
      for (const Outcome& o : cached[t]) EXPECT_GT(o.finish.usage.cached_tokens, 40);
    }
  }
  expect_cache_reuse_and_idle(*off, *on, *tiny, cached);
}

TEST(EngineSynthetic, BlockAccountingAfterSubmitsCancelsCompletionsAndErrors) {
  Rng rng;
  SCOPED_TRACE("seed " + std::to_string(rng.seed));
  auto engine = make_engine(tiny_model_path(), tiny_options(true, tiny_kv_blocks_bytes(24)));
  ASSERT_NE(engine, nullptr);
  const Tokens shared = rng.tokens(20);
  std::vector<Request> requests;
  for (int i = 0; i < 30; ++i) {
    Request r;
    switch (i % 5) {
      case 0:
        r = greedy_tokens(rng.tokens(rng.between(1, 60)), rng.between(1, 20));
        break;
      case 1: {
        Tokens p = shared;
        const Tokens tail = rng.tokens(rng.between(1, 40));
        p.insert(p.end(), tail.begin(), tail.end());
        r = greedy_tokens(p, rng.between(1, 20));
        break;
      }
      case 2:
        r = greedy_tokens(rng.tokens(600), 4);
        break;  // longer than the context: error
      case 3:
        r = greedy_tokens({5, 999999}, 4);
        break;  // bad token id: error
      default:
        r = greedy_tokens(rng.tokens(rng.between(1, 300)), 30);
        break;  // may not fit: OOM or preemption
    }
    requests.push_back(r);
  }
  const CancelRun run = submit_with_random_cancels(*engine, rng, requests);
  EXPECT_GE(run.errors, 12);   // the context and token-id errors fail before any cancel can reach them
  engine->cancel(run.ids[0]);  // finished: ignored
  engine->cancel(123456);      // unknown: ignored
  expect_idle_kv(*engine);
  EXPECT_EQ(engine->stats().requests_finished, 30);
}

TEST(EngineSynthetic, ContextExceededFailsThatRequestAloneAndGenerationStopsAtTheContext) {
  EngineOptions o = tiny_options(true);
  o.context_length = 64;
  auto engine = make_engine(tiny_model_path(), o);
  ASSERT_NE(engine, nullptr);
  Rng rng;
  const std::vector<Outcome> out =
      run_together(*engine, {greedy_tokens(rng.tokens(64), 4), greedy_tokens(rng.tokens(50), 40),
                             greedy_tokens(rng.tokens(10), 5), greedy_tokens({}, 4)});
  EXPECT_EQ(out[0].finish.reason, FinishReason::kError);
  ASSERT_TRUE(out[0].finish.error.has_value());
  EXPECT_EQ(out[0].finish.error->code, ErrorCode::kContextExceeded);
  EXPECT_EQ(out[1].finish.reason, FinishReason::kLength);
  EXPECT_EQ(out[1].finish.usage.generated_tokens, 14);  // 50 + 14 = the context
  EXPECT_EQ(out[2].finish.reason, FinishReason::kLength);
  EXPECT_EQ(out[2].finish.usage.generated_tokens, 5);
  EXPECT_EQ(out[3].finish.reason, FinishReason::kError);
  ASSERT_TRUE(out[3].finish.error.has_value());
  EXPECT_EQ(out[3].finish.error->code, ErrorCode::kInvalidArgument);
  expect_idle_kv(*engine);
}

TEST(EngineSynthetic, CancelMidPrefillAndMidDecode) {
  EngineOptions o = tiny_options(true);
  o.max_batch_tokens = 16;  // a 400-token prompt takes 25 steps of prefill
  auto engine = make_engine(tiny_model_path(), o);
  ASSERT_NE(engine, nullptr);
  Rng rng;
  auto long_prefill = std::make_shared<RecordingSink>();
  auto decoder = std::make_shared<RecordingSink>();
  auto canceller = std::make_shared<RecordingSink>();
  Engine* e = engine.get();
  // Set right after submit; read by the hooks steps later (a token needs a forward step).
  std::atomic<RequestId> decoding{0}, prefilling{0};
  // On the engine thread: the canceller's third token cancels the long
  // prefill (still prefilling: 16 tokens a step); the decoding request cancels
  // itself at its third token.
  canceller->on_text_hook = [e, &prefilling](const TextEvent&, int index) {
    if (index == 2) e->cancel(prefilling.load());
  };
  decoder->on_text_hook = [e, &decoding](const TextEvent&, int index) {
    if (index == 2) e->cancel(decoding.load());
  };
  // Decodes come first, then prefill chunks: the canceller runs alongside the prefill.
  decoding = engine->submit(greedy_tokens(rng.tokens(5), 50), decoder);
  engine->submit(greedy_tokens(rng.tokens(3), 8), canceller);
  prefilling = engine->submit(greedy_tokens(rng.tokens(400), 4), long_prefill);
  const FinishEvent p = long_prefill->wait();
  EXPECT_EQ(p.reason, FinishReason::kCancelled);
  EXPECT_EQ(p.usage.generated_tokens, 0);
  EXPECT_FALSE(p.error.has_value());
  const FinishEvent d = decoder->wait();
  EXPECT_EQ(d.reason, FinishReason::kCancelled);
  EXPECT_EQ(d.usage.generated_tokens, 3);  // stopped within one step
  EXPECT_EQ(canceller->wait().reason, FinishReason::kLength);
  expect_idle_kv(*engine);
}

TEST(EngineSynthetic, DestructionCancelsWhatIsStillRunning) {
  Rng rng;
  std::vector<std::shared_ptr<RecordingSink>> sinks;
  {
    auto engine = make_engine(tiny_model_path(), tiny_options(true));
    ASSERT_NE(engine, nullptr);
    for (int i = 0; i < 4; ++i) {
      sinks.push_back(std::make_shared<RecordingSink>());
      engine->submit(greedy_tokens(rng.tokens(100), 400), sinks.back());
    }
  }
  for (const auto& s : sinks) {
    EXPECT_EQ(s->finish_count(), 1);
    EXPECT_EQ(s->wait().reason, FinishReason::kCancelled);
  }
}

// Delegates to a real model but fails any step that contains kPoison.
class PoisonedModel final : public Model {
 public:
  static constexpr std::int32_t kPoison = 7;
  explicit PoisonedModel(std::unique_ptr<Model> inner) : inner_(std::move(inner)) {}
  const ModelHyperParams& hparams() const override { return inner_->hparams(); }
  std::size_t kv_block_bytes(std::int32_t block_size) const override { return inner_->kv_block_bytes(block_size); }
  Result<void> allocate_kv(const KvLayout& layout) override { return inner_->allocate_kv(layout); }
  ModelMemory memory() const override { return inner_->memory(); }
  Result<void> forward(std::span<const SequenceStep> steps, std::span<float> logits) override {
    for (const SequenceStep& s : steps) {
      if (std::find(s.tokens.begin(), s.tokens.end(), kPoison) != s.tokens.end()) {
        return make_error(ErrorCode::kInternal, "poisoned step");
      }
    }
    return inner_->forward(steps, logits);
  }

 private:
  std::unique_ptr<Model> inner_;
};

TEST(EngineSynthetic, AForwardErrorEndsThatStepsRequestsAndTheEngineKeepsServing) {
  Result<ModelBundle> bundle = models::load_model(tiny_model_path(), models::LoadOptions{2});
  ASSERT_TRUE(bundle.ok());
  bundle->model = std::make_unique<PoisonedModel>(std::move(bundle->model));
  Result<std::unique_ptr<Engine>> engine = Engine::create(std::move(bundle).value(), tiny_options(true));
  ASSERT_TRUE(engine.ok());
  const std::vector<Outcome> bad = run_together(**engine, {greedy_tokens({10, 11, PoisonedModel::kPoison, 12}, 4)});
  EXPECT_EQ(bad[0].finish.reason, FinishReason::kError);
  ASSERT_TRUE(bad[0].finish.error.has_value());
  EXPECT_EQ(bad[0].finish.error->message, "poisoned step");
  const std::vector<Outcome> good = run_together(**engine, {greedy_tokens({10, 11, 12, 13}, 4)});
  EXPECT_EQ(good[0].finish.reason, FinishReason::kLength);
  expect_idle_kv(**engine);
}

TEST(EngineSynthetic, StatsReportTheRunAndMemory) {
  auto engine = make_engine(tiny_model_path(), tiny_options(true));
  ASSERT_NE(engine, nullptr);
  Rng rng;
  (void)run_together(*engine, {greedy_tokens(rng.tokens(30), 10), greedy_tokens(rng.tokens(30), 10)});
  // stats() shows the engine as of its last published step: the finishing
  // step is published before the engine thread runs the debug hook.
  expect_idle_kv(*engine);
  const EngineStats s = engine->stats();
  EXPECT_GT(s.decode_tps, 0);
  EXPECT_GT(s.prefill_tps, 0);
  EXPECT_EQ(s.ttft.count, 2);
  EXPECT_EQ(s.inter_token.count, 18);
  EXPECT_LE(s.inter_token.p50, s.inter_token.p99);
  EXPECT_EQ(s.waiting, 0);
  EXPECT_EQ(s.running, 0);
  EXPECT_EQ(s.kv_blocks_used, 0);
  EXPECT_EQ(s.kv_blocks_total, s.kv_blocks_free + s.kv_blocks_cached);
  EXPECT_GT(s.memory.weights, 0u);
  EXPECT_EQ(s.memory.kv_pool, tiny_kv_blocks_bytes(s.kv_blocks_total));
  EXPECT_GT(s.step.forward, 0);
  EXPECT_EQ(s.requests_finished, 2);
  EXPECT_EQ(s.memory.device_total, 0u);  // the CPU model has no device
  EXPECT_EQ(s.memory.device_free, 0u);
  // The CPU model times every layer of every step, inside the engine's
  // forward phase and over the same window of steps (10 here, under the 64 it
  // keeps): each step's layer sum is at most its forward time, so the sum of
  // the layer means is at most the forward mean (up to rounding).
  ASSERT_EQ(s.step.forward_by_layer.size(), engine->model_info().n_layer);
  double layers = 0;
  for (const double ms : s.step.forward_by_layer) {
    EXPECT_GE(ms, 0.0);
    layers += ms;
  }
  EXPECT_GT(layers, 0.0);
  EXPECT_LE(layers, s.step.forward * (1 + 1e-9));
  EXPECT_DOUBLE_EQ(s.step.forward_timed, s.step.forward);  // every step timed: the same window
}

// Inter-token latency is measured once, by the engine: each request's finish
// carries the percentiles of its own gaps, the same instants its text events
// carry (one token per event here: no stop strings).
TEST(EngineSynthetic, EachRequestReportsThePercentilesOfItsOwnTokenGaps) {
  auto engine = make_engine(tiny_model_path(), tiny_options(true));
  ASSERT_NE(engine, nullptr);
  Rng rng;
  auto sink = std::make_shared<RecordingSink>();
  engine->submit(greedy_tokens(rng.tokens(20), 24), sink);
  const FinishEvent fin = sink->wait();
  std::vector<double> gaps;
  std::optional<Clock::time_point> last;
  for (const TextEvent& e : sink->events()) {
    ASSERT_EQ(e.token_ids.size(), 1u);
    if (last) gaps.push_back(std::chrono::duration<double, std::milli>(e.time - *last).count());
    last = e.time;
  }
  ASSERT_EQ(gaps.size(), 23u);
  std::sort(gaps.begin(), gaps.end());
  EXPECT_DOUBLE_EQ(fin.usage.itl_p50_ms, gaps[11]);  // nearest rank: ceil(0.50 * 23) = 12th
  EXPECT_DOUBLE_EQ(fin.usage.itl_p95_ms, gaps[21]);  // ceil(0.95 * 23) = 22nd
  EXPECT_DOUBLE_EQ(fin.usage.itl_p99_ms, gaps[22]);
  EXPECT_GT(fin.usage.itl_p50_ms, 0.0);

  auto one = std::make_shared<RecordingSink>();
  engine->submit(greedy_tokens(rng.tokens(20), 1), one);
  const FinishEvent single = one->wait();
  EXPECT_EQ(single.usage.generated_tokens, 1);
  EXPECT_EQ(single.usage.itl_p50_ms, 0.0);
  EXPECT_EQ(single.usage.itl_p99_ms, 0.0);
}

TEST(EngineSynthetic, ThePrefixCacheKeyHoldsTheWeightsAndTheKvPrecision) {
  const std::uint64_t f16 = runtime::prefix_cache_key("sha256:ab", KvPrecision::kF16);
  EXPECT_EQ(f16, runtime::prefix_cache_key("sha256:ab", KvPrecision::kF16));
  EXPECT_NE(f16, runtime::prefix_cache_key("sha256:ab", KvPrecision::kFp8E4M3));
  EXPECT_NE(f16, runtime::prefix_cache_key("sha256:ab", KvPrecision::kQ8_0));
  EXPECT_NE(f16, runtime::prefix_cache_key("sha256:cd", KvPrecision::kF16));
}

}  // namespace
}  // namespace hearth::testing
