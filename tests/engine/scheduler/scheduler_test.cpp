// Exact plans from the scheduler on tiny KV pools (block size 4), no model.
#include "engine/scheduler/scheduler.h"

#include <gtest/gtest.h>

#include <numeric>
#include <tuple>
#include <vector>

namespace hearth::scheduler {
namespace {

using Tokens = std::vector<std::int32_t>;
// id, start_pos, num_tokens, want_logits, prefill
using Chunk = std::tuple<SeqId, std::int32_t, std::int32_t, bool, bool>;

Tokens range(std::int32_t first, std::int32_t n) {
  Tokens t(static_cast<std::size_t>(n));
  std::iota(t.begin(), t.end(), first);
  return t;
}

std::unique_ptr<kv::KvCacheManager> make_kv(std::int32_t blocks) {
  kv::KvCacheConfig cfg;
  cfg.num_blocks = blocks;
  cfg.block_size = 4;
  return std::move(kv::KvCacheManager::create(cfg)).value();
}

std::vector<Chunk> chunks(const StepPlan& plan) {
  std::vector<Chunk> out;
  for (const auto& c : plan.chunks) out.emplace_back(c.id, c.start_pos, c.num_tokens, c.want_logits, c.prefill);
  return out;
}

// Completes the plan as the runtime would, sampling token 1000 + id where logits were wanted.
void run(Scheduler& s, const StepPlan& plan) {
  ASSERT_TRUE(s.complete(plan).ok());
  for (const auto& c : plan.chunks) {
    if (c.want_logits) {
      ASSERT_TRUE(s.append_token(c.id, static_cast<std::int32_t>(1000 + c.id)).ok());
    }
  }
}

TEST(Scheduler, ChunksALongPromptWithinTheTokenBudget) {
  auto kv = make_kv(16);
  Scheduler s({.max_batch_tokens = 8, .max_sequences = 4}, *kv);
  ASSERT_TRUE(s.add(1, range(0, 20), 0).ok());
  StepPlan p1 = s.schedule();
  EXPECT_EQ(chunks(p1), (std::vector<Chunk>{{1, 0, 8, false, true}}));
  run(s, p1);
  StepPlan p2 = s.schedule();
  EXPECT_EQ(chunks(p2), (std::vector<Chunk>{{1, 8, 8, false, true}}));
  run(s, p2);
  StepPlan p3 = s.schedule();
  EXPECT_EQ(chunks(p3), (std::vector<Chunk>{{1, 16, 4, true, true}}));
  run(s, p3);
  StepPlan p4 = s.schedule();
  EXPECT_EQ(chunks(p4), (std::vector<Chunk>{{1, 20, 1, true, false}}));
  EXPECT_EQ(kv->table(1)->num_tokens(), 21);
}

TEST(Scheduler, DecodesComeFirstThenPrefillGetsTheRestOfTheBudget) {
  auto kv = make_kv(16);
  Scheduler s({.max_batch_tokens = 8, .max_sequences = 4}, *kv);
  ASSERT_TRUE(s.add(1, range(0, 4), 0).ok());
  run(s, s.schedule());
  ASSERT_TRUE(s.add(2, range(100, 10), 0).ok());
  ASSERT_TRUE(s.add(3, range(200, 3), 0).ok());
  StepPlan p = s.schedule();
  EXPECT_EQ(chunks(p), (std::vector<Chunk>{{1, 4, 1, true, false}, {2, 0, 7, false, true}}));
  EXPECT_EQ(s.num_waiting(), 1);  // budget exhausted: 3 waits
  run(s, p);
  p = s.schedule();
  EXPECT_EQ(chunks(p), (std::vector<Chunk>{{1, 5, 1, true, false}, {2, 7, 3, true, true}, {3, 0, 3, true, true}}));
}

TEST(Scheduler, AdmitsByPriorityThenArrival) {
  auto kv = make_kv(16);
  Scheduler s({.max_batch_tokens = 64, .max_sequences = 1}, *kv);
  ASSERT_TRUE(s.add(1, range(0, 4), 0).ok());
  ASSERT_TRUE(s.add(2, range(10, 4), 5).ok());
  ASSERT_TRUE(s.add(3, range(20, 4), 5).ok());
  ASSERT_TRUE(s.add(4, range(30, 4), -1).ok());
  EXPECT_EQ(s.waiting(), (std::vector<SeqId>{2, 3, 1, 4}));
  std::vector<SeqId> order;
  while (s.has_work()) {
    StepPlan p = s.schedule();
    ASSERT_EQ(p.chunks.size(), 1u);
    order.push_back(p.chunks[0].id);
    ASSERT_TRUE(s.complete(p).ok());
    s.remove(p.chunks[0].id);
  }
  EXPECT_EQ(order, (std::vector<SeqId>{2, 3, 1, 4}));
  EXPECT_EQ(kv->stats().blocks.used, 0);
}

TEST(Scheduler, MaxSequencesBoundsTheRunningSet) {
  auto kv = make_kv(16);
  Scheduler s({.max_batch_tokens = 64, .max_sequences = 2}, *kv);
  for (SeqId id = 1; id <= 3; ++id) ASSERT_TRUE(s.add(id, range(static_cast<std::int32_t>(id) * 10, 3), 0).ok());
  StepPlan p = s.schedule();
  EXPECT_EQ(chunks(p), (std::vector<Chunk>{{1, 0, 3, true, true}, {2, 0, 3, true, true}}));
  EXPECT_EQ(s.num_running(), 2);
  EXPECT_EQ(s.num_waiting(), 1);
}

TEST(Scheduler, AdmissionReusesTheCachedPrefix) {
  auto kv = make_kv(16);
  Scheduler s({.max_batch_tokens = 64, .max_sequences = 4}, *kv);
  ASSERT_TRUE(s.add(1, range(0, 9), 0).ok());
  run(s, s.schedule());
  s.remove(1);
  Tokens follow_up = range(0, 9);
  follow_up.push_back(77);
  follow_up.push_back(78);
  ASSERT_TRUE(s.add(2, follow_up, 0).ok());
  StepPlan p = s.schedule();
  EXPECT_EQ(chunks(p), (std::vector<Chunk>{{2, 8, 3, true, true}}));
  ASSERT_EQ(p.admitted.size(), 1u);
  EXPECT_EQ(p.admitted[0].cached_tokens, 8);
}

TEST(Scheduler, PreemptsTheNewestRunningSequenceWhenADecodeNeedsABlock) {
  auto kv = make_kv(4);
  Scheduler s({.max_batch_tokens = 16, .max_sequences = 4}, *kv);
  ASSERT_TRUE(s.add(1, range(0, 7), 0).ok());
  ASSERT_TRUE(s.add(2, range(100, 7), 0).ok());
  StepPlan p = s.schedule();
  EXPECT_EQ(chunks(p), (std::vector<Chunk>{{1, 0, 7, true, true}, {2, 0, 7, true, true}}));
  run(s, p);  // 8 tokens each: both blocks full
  p = s.schedule();
  EXPECT_EQ(chunks(p), (std::vector<Chunk>{{1, 7, 1, true, false}, {2, 7, 1, true, false}}));
  run(s, p);  // position 8 needs a third block each; the pool is full
  p = s.schedule();
  EXPECT_EQ(chunks(p), (std::vector<Chunk>{{1, 8, 1, true, false}}));
  EXPECT_EQ(p.preempted, (std::vector<SeqId>{2}));
  EXPECT_EQ(s.preemptions(), 1);
  EXPECT_EQ(s.waiting(), (std::vector<SeqId>{2}));
  EXPECT_EQ(s.tokens(2).size(), 9u);  // its generated tokens stay: recomputed as prompt
  EXPECT_EQ(s.num_computed(2), 0);
  ASSERT_TRUE(kv->check_invariants().ok());
  run(s, p);
  s.remove(1);  // 1 finishes: 2 comes back through the prefix cache
  p = s.schedule();
  ASSERT_EQ(p.admitted.size(), 1u);
  EXPECT_EQ(p.admitted[0].id, 2);
  EXPECT_EQ(p.admitted[0].cached_tokens, 4);  // its first block survived; the tail was evicted first
  EXPECT_EQ(chunks(p), (std::vector<Chunk>{{2, 4, 5, true, true}}));
}

TEST(Scheduler, FailsASequenceThatCannotFitThePoolAlone) {
  auto kv = make_kv(2);
  Scheduler s({.max_batch_tokens = 64, .max_sequences = 4}, *kv);
  ASSERT_TRUE(s.add(1, range(0, 12), 0).ok());
  StepPlan p = s.schedule();
  EXPECT_EQ(chunks(p), (std::vector<Chunk>{{1, 0, 8, false, true}}));  // what fits
  run(s, p);
  p = s.schedule();
  EXPECT_TRUE(p.chunks.empty());
  ASSERT_EQ(p.failed.size(), 1u);
  EXPECT_EQ(p.failed[0].id, 1);
  EXPECT_EQ(p.failed[0].error.code, ErrorCode::kOutOfMemory);
  EXPECT_FALSE(s.has_work());
  EXPECT_TRUE(kv->check_invariants().ok());
  EXPECT_EQ(kv->stats().blocks.used, 0);
}

TEST(Scheduler, AFailedSequenceDoesNotBlockTheQueue) {
  auto kv = make_kv(4);
  Scheduler s({.max_batch_tokens = 8, .max_sequences = 4}, *kv);
  ASSERT_TRUE(s.add(1, range(0, 16), 0).ok());
  ASSERT_TRUE(s.add(2, range(100, 16), 0).ok());
  StepPlan p = s.schedule();
  EXPECT_EQ(chunks(p), (std::vector<Chunk>{{1, 0, 8, false, true}}));
  run(s, p);
  p = s.schedule();
  EXPECT_EQ(chunks(p), (std::vector<Chunk>{{1, 8, 8, true, true}}));
  run(s, p);
  // 1 now holds every block and needs a fifth to decode: it alone cannot fit.
  p = s.schedule();
  ASSERT_EQ(p.failed.size(), 1u);
  EXPECT_EQ(p.failed[0].id, 1);
  EXPECT_EQ(chunks(p), (std::vector<Chunk>{{2, 0, 8, false, true}}));
}

}  // namespace
}  // namespace hearth::scheduler
