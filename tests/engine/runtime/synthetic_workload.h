// The workloads of the runtime tests on the tiny synthetic model, shared by the
// CPU tests (engine_synthetic_test.cpp) and their GPU runs (engine_cuda_test.cpp):
// random prompts from a printed seed, engine options, multi-turn conversations.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "engine_test_util.h"
#include "hearth/engine.h"

namespace hearth::testing {

using Tokens = std::vector<std::int32_t>;

// A fixed seed (HEARTH_TEST_SEED overrides it) keeps the runs reproducible;
// the tests print it with every failure.
std::uint32_t test_seed();

struct Rng {
  std::uint32_t seed = test_seed();
  std::mt19937 gen{seed};
  Tokens tokens(int n);  // ids in [3, 383]: past the ChatML specials of the tiny model's 384
  int between(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); }
};

// Context 512, 64 tokens and 16 sequences a step.
EngineOptions tiny_options(bool prefix_cache, std::size_t kv_budget_bytes = 0);

// Bytes of `blocks` KV blocks of the tiny model: 2 layers x 2 KV heads x 32 x
// 16 tokens x f16 x (K and V).
std::size_t tiny_kv_blocks_bytes(int blocks);

// Multi-turn conversations sharing a 40-token system prompt: each turn's
// prompt is the previous prompt + its answer + a new user message; 12 greedy
// tokens a turn. [turn][conversation]. `together`: a turn's requests are
// submitted at once, else one after another.
// After run_conversations on engines with the cache off, on, and on in a tiny
// pool: the shared system prompt was reused, the tiny pool evicted and
// preempted, and every engine is idle with no block in use.
void expect_cache_reuse_and_idle(Engine& off, Engine& on, Engine& tiny,
                                 const std::vector<std::vector<Outcome>>& cached);

// Submits the requests in order, cancelling a random earlier one after about
// one submit in four, waits for every finish and checks each request finished
// exactly once with an error exactly when its reason says so. Returns the ids
// and the number that ended in an error.
struct CancelRun {
  std::vector<RequestId> ids;
  int errors = 0;
};
CancelRun submit_with_random_cancels(Engine& engine, Rng& rng, const std::vector<Request>& requests);

std::vector<std::vector<Outcome>> run_conversations(Engine& engine, Rng& rng_copy, int conversations, int turns,
                                                    bool together);

}  // namespace hearth::testing
