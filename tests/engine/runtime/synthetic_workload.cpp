#include "synthetic_workload.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace hearth::testing {

std::uint32_t test_seed() {
  const char* s = std::getenv("HEARTH_TEST_SEED");
  return s ? static_cast<std::uint32_t>(std::strtoul(s, nullptr, 10)) : 20261129u;
}

Tokens Rng::tokens(int n) {
  std::uniform_int_distribution<std::int32_t> d(3, 383);
  Tokens t(static_cast<std::size_t>(n));
  for (auto& x : t) x = d(gen);
  return t;
}

EngineOptions tiny_options(bool prefix_cache, std::size_t kv_budget_bytes) {
  EngineOptions o;
  o.context_length = 512;
  o.max_batch_tokens = 64;
  o.max_sequences = 16;
  o.prefix_cache = prefix_cache;
  o.kv_budget_bytes = kv_budget_bytes;
  return o;
}

std::size_t tiny_kv_blocks_bytes(int blocks) {
  return static_cast<std::size_t>(blocks) * 2 * 2 * 32 * 16 * 2 * 2;
}

std::vector<std::vector<Outcome>> run_conversations(Engine& engine, Rng& rng_copy, int conversations, int turns,
                                                    bool together) {
  const Tokens system = rng_copy.tokens(40);
  std::vector<Tokens> history(static_cast<std::size_t>(conversations), system);
  std::vector<std::vector<Outcome>> out(static_cast<std::size_t>(turns));
  for (int t = 0; t < turns; ++t) {
    std::vector<Request> requests;
    for (auto& h : history) {
      const Tokens user = rng_copy.tokens(rng_copy.between(3, 30));
      h.insert(h.end(), user.begin(), user.end());
      requests.push_back(greedy_tokens(h, 12));
    }
    out[static_cast<std::size_t>(t)] = together ? run_together(engine, requests) : run_alone(engine, requests);
    for (std::size_t c = 0; c < history.size(); ++c) {
      const Tokens& gen = out[static_cast<std::size_t>(t)][c].finish.generated_token_ids;
      history[c].insert(history[c].end(), gen.begin(), gen.end());
    }
  }
  return out;
}

void expect_cache_reuse_and_idle(Engine& off, Engine& on, Engine& tiny,
                                 const std::vector<std::vector<Outcome>>& cached) {
  // Turn 0 shares the 40-token system prompt (two full blocks) between conversations.
  EXPECT_GE(cached[0][1].finish.usage.cached_tokens, 32);
  const EngineStats s = tiny.stats();
  EXPECT_GT(s.prefix_evictions, 0);
  EXPECT_GT(s.preemptions, 0);
  EXPECT_GT(on.stats().prefix_hit_rate, 0.5);
  expect_idle_kv(off);
  expect_idle_kv(on);
  expect_idle_kv(tiny);
}

CancelRun submit_with_random_cancels(Engine& engine, Rng& rng, const std::vector<Request>& requests) {
  CancelRun run;
  std::vector<std::shared_ptr<RecordingSink>> sinks;
  for (const Request& r : requests) {
    sinks.push_back(std::make_shared<RecordingSink>());
    run.ids.push_back(engine.submit(r, sinks.back()));
    const int last = static_cast<int>(run.ids.size()) - 1;
    if (rng.between(0, 3) == 0) engine.cancel(run.ids[static_cast<std::size_t>(rng.between(0, last))]);
  }
  for (const auto& s : sinks) {
    const FinishEvent f = s->wait();
    run.errors += f.reason == FinishReason::kError ? 1 : 0;
    EXPECT_EQ(f.reason == FinishReason::kError, f.error.has_value());
  }
  for (const auto& s : sinks) EXPECT_EQ(s->finish_count(), 1);
  return run;
}

}  // namespace hearth::testing
