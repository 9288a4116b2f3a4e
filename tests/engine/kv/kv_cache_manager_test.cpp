#include "engine/kv/kv_cache_manager.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace hearth::kv {
namespace {

using Tokens = std::vector<int32_t>;

Tokens range(int32_t first, int32_t n) {
  Tokens t(static_cast<size_t>(n));
  std::iota(t.begin(), t.end(), first);
  return t;
}

Tokens concat(const Tokens& a, const Tokens& b) {
  Tokens out(a);
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

std::unique_ptr<KvCacheManager> make(int32_t blocks, int32_t block_size = 4, BlockHashFn hash = {}) {
  KvCacheConfig cfg;
  cfg.num_blocks = blocks;
  cfg.block_size = block_size;
  cfg.hash_fn = std::move(hash);
  return std::move(KvCacheManager::create(cfg)).value();
}

void expect_ok(const Result<void>& r) {
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().describe());
}

// Admits `prompt` as `seq`, "computes" it and commits it; returns the cached tokens.
int32_t run_prompt(KvCacheManager& kv, SeqId seq, const Tokens& prompt) {
  Result<PromptAdmission> a = kv.allocate_prompt(seq, prompt);
  EXPECT_TRUE(a.ok()) << (a.ok() ? "" : a.error().describe());
  if (!a.ok()) return -1;
  expect_ok(kv.commit(seq, prompt));
  expect_ok(kv.check_invariants());
  return a->cached_tokens;
}

std::vector<BlockId> blocks_of(const KvCacheManager& kv, SeqId seq) {
  const BlockTable* t = kv.table(seq);
  return t ? std::vector<BlockId>(t->blocks().begin(), t->blocks().end()) : std::vector<BlockId>{};
}

TEST(KvCacheManager, SequencesSharingASystemPromptShareItsBlocks) {
  auto kv = make(16);
  const Tokens system = range(100, 8);  // two full blocks of 4
  EXPECT_EQ(run_prompt(*kv, 1, concat(system, {1, 2, 3})), 0);
  EXPECT_EQ(run_prompt(*kv, 2, concat(system, {7, 8})), 8);
  EXPECT_EQ(run_prompt(*kv, 3, concat(system, {9})), 8);
  const auto a = blocks_of(*kv, 1), b = blocks_of(*kv, 2), c = blocks_of(*kv, 3);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0], a[0]);
  EXPECT_EQ(b[1], a[1]);
  EXPECT_EQ(c[1], a[1]);
  EXPECT_NE(b[2], a[2]);
  EXPECT_EQ(kv->pool().ref_count(a[0]), 3);
  EXPECT_EQ(kv->pool().ref_count(a[2]), 1);
  const KvCacheStats s = kv->stats();
  EXPECT_EQ(s.prefix.lookups, 3);
  EXPECT_EQ(s.prefix.queried_tokens, 11 + 10 + 9);
  EXPECT_EQ(s.prefix.hit_tokens, 16);
  EXPECT_DOUBLE_EQ(s.prefix.hit_rate(), 16.0 / 30.0);
  EXPECT_EQ(s.blocks.used, 3 + 1 + 1);
  for (SeqId seq : {1, 2, 3}) expect_ok(kv->free_sequence(seq));
  expect_ok(kv->check_invariants());
  // The system prompt's blocks stay findable; the partial tails do not.
  EXPECT_EQ(kv->stats().blocks.cached, 2);
  EXPECT_EQ(kv->stats().blocks.used, 0);
  EXPECT_EQ(run_prompt(*kv, 4, concat(system, {5, 5, 5, 5, 5})), 8);
}

TEST(KvCacheManager, FollowUpTurnReusesTheWholeConversationSoFar) {
  auto kv = make(16);
  Tokens turn1 = range(0, 10);
  EXPECT_EQ(run_prompt(*kv, 1, turn1), 0);
  // Decode 6 tokens, committing as they are computed.
  Tokens seq = turn1;
  for (int32_t t = 50; t < 56; ++t) {
    expect_ok(kv->append_slots(1, 1));
    seq.push_back(t);
    expect_ok(kv->commit(1, seq));
  }
  expect_ok(kv->free_sequence(1));
  const Tokens turn2 = concat(seq, range(200, 5));  // 21 tokens; 16 were computed
  EXPECT_EQ(run_prompt(*kv, 2, turn2), 16);
  expect_ok(kv->check_invariants());
}

TEST(KvCacheManager, PartialLastBlockIsNeverShared) {
  auto kv = make(16);
  const Tokens prompt = range(0, 6);  // one full block + 2 tokens
  EXPECT_EQ(run_prompt(*kv, 1, prompt), 0);
  EXPECT_EQ(kv->stats().prefix.inserted_blocks, 1);
  EXPECT_EQ(run_prompt(*kv, 2, concat(prompt, {6, 7, 8})), 4);
  EXPECT_NE(blocks_of(*kv, 1)[1], blocks_of(*kv, 2)[1]);
  // A prompt that is entirely cached still computes its last token.
  EXPECT_EQ(run_prompt(*kv, 3, range(0, 4)), 0);
  EXPECT_EQ(run_prompt(*kv, 4, range(0, 5)), 4);
}

TEST(KvCacheManager, ForcedHashCollisionDoesNotServeWrongTokens) {
  auto kv = make(16, 4, [](uint64_t, std::span<const int32_t>, uint64_t) { return uint64_t{7}; });
  EXPECT_EQ(run_prompt(*kv, 1, range(0, 9)), 0);
  EXPECT_EQ(run_prompt(*kv, 2, range(100, 9)), 0);  // every block hashes alike
  EXPECT_EQ(run_prompt(*kv, 3, range(0, 9)), 4);    // the only indexed block
  EXPECT_EQ(kv->stats().prefix.inserted_blocks, 1);
}

TEST(KvCacheManager, EvictionIsLeastRecentlyReleasedAndTailFirst) {
  auto kv = make(6);
  // Three sequences of 2 full blocks each (+1 token so both blocks are cacheable).
  const Tokens a = range(0, 9), b = range(100, 9), c = range(200, 9);
  const std::vector<std::pair<SeqId, Tokens>> first_two{{1, a}, {2, b}};
  for (const auto& [seq, p] : first_two) {
    ASSERT_TRUE(kv->allocate_prompt(seq, p, 8).ok());
    expect_ok(kv->commit(seq, Tokens(p.begin(), p.begin() + 8)));
  }
  expect_ok(kv->free_sequence(1));  // released first: evicted first
  expect_ok(kv->free_sequence(2));
  EXPECT_EQ(kv->stats().blocks.cached, 4);
  ASSERT_TRUE(kv->allocate_prompt(3, c, 8).ok());  // 2 free blocks, no eviction
  EXPECT_EQ(kv->stats().prefix.evictions, 0);
  expect_ok(kv->append_slots(3, 1));  // evicts a's tail block
  EXPECT_EQ(kv->stats().prefix.evictions, 1);
  EXPECT_EQ(kv->estimate_prompt(a).cached_tokens, 4);
  EXPECT_EQ(kv->estimate_prompt(b).cached_tokens, 8);
  expect_ok(kv->append_slots(3, 4));  // evicts a's head
  EXPECT_EQ(kv->estimate_prompt(a).cached_tokens, 0);
  EXPECT_EQ(kv->estimate_prompt(b).cached_tokens, 8);
  expect_ok(kv->append_slots(3, 4));  // then b's tail
  EXPECT_EQ(kv->estimate_prompt(b).cached_tokens, 4);
  EXPECT_EQ(kv->stats().prefix.evictions, 3);
  expect_ok(kv->check_invariants());
}

TEST(KvCacheManager, HitRefreshesRecency) {
  auto kv = make(4);
  const Tokens a = range(0, 5), b = range(100, 5);
  EXPECT_EQ(run_prompt(*kv, 1, a), 0);
  EXPECT_EQ(run_prompt(*kv, 2, b), 0);
  expect_ok(kv->free_sequence(1));
  expect_ok(kv->free_sequence(2));
  EXPECT_EQ(run_prompt(*kv, 3, a), 4);  // a is used again: now more recent than b
  expect_ok(kv->free_sequence(3));
  ASSERT_TRUE(kv->allocate_prompt(4, range(300, 12)).ok());  // 3 blocks: 2 free + 1 eviction
  EXPECT_EQ(kv->estimate_prompt(a).cached_tokens, 4);
  EXPECT_EQ(kv->estimate_prompt(b).cached_tokens, 0);
}

TEST(KvCacheManager, OutOfMemoryLeavesEverythingUnchanged) {
  auto kv = make(4);
  const Tokens shared = range(0, 8);
  EXPECT_EQ(run_prompt(*kv, 1, concat(shared, {1})), 0);  // 3 blocks used
  expect_ok(kv->free_sequence(1));                        // 2 cached, 2 free
  // 8 cached tokens (both cached blocks revived) + 9 new tokens = 3 fresh blocks: 5 > 4.
  const Tokens big = concat(shared, range(50, 9));
  EXPECT_EQ(kv->estimate_prompt(big).blocks_needed, 5);
  const KvCacheStats before = kv->stats();
  Result<PromptAdmission> r = kv->allocate_prompt(7, big);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kOutOfMemory);
  EXPECT_FALSE(kv->contains(7));
  const KvCacheStats after = kv->stats();
  EXPECT_EQ(after.blocks.free, before.blocks.free);
  EXPECT_EQ(after.blocks.cached, before.blocks.cached);
  EXPECT_EQ(after.prefix.lookups, before.prefix.lookups);
  EXPECT_EQ(after.prefix.evictions, 0);
  expect_ok(kv->check_invariants());
  // A chunk that fits is admitted; growing past the pool fails without change.
  ASSERT_TRUE(kv->allocate_prompt(7, big, 4).ok());
  EXPECT_EQ(kv->table(7)->num_tokens(), 12);
  EXPECT_TRUE(kv->can_allocate(1));
  EXPECT_FALSE(kv->can_allocate(2));
  EXPECT_EQ(*kv->blocks_needed(7, 5), 2);
  Result<void> grow = kv->append_slots(7, 5);
  ASSERT_FALSE(grow.ok());
  EXPECT_EQ(grow.error().code, ErrorCode::kOutOfMemory);
  EXPECT_EQ(kv->table(7)->num_tokens(), 12);
  expect_ok(kv->check_invariants());
}

TEST(KvCacheManager, RejectsMisuseWithErrors) {
  auto kv = make(4);
  EXPECT_EQ(kv->allocate_prompt(1, Tokens{}).error().code, ErrorCode::kInvalidArgument);
  ASSERT_TRUE(kv->allocate_prompt(1, range(0, 3)).ok());
  EXPECT_EQ(kv->allocate_prompt(1, range(0, 3)).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(kv->commit(1, range(0, 4)).error().code, ErrorCode::kInvalidArgument);  // beyond reserved slots
  EXPECT_EQ(kv->free_sequence(9).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(kv->append_slots(9, 1).error().code, ErrorCode::kNotFound);
  EXPECT_FALSE(KvCacheManager::create(KvCacheConfig{}).ok());
  expect_ok(kv->check_invariants());
}

TEST(KvCacheManager, DisabledPrefixCacheNeverHits) {
  KvCacheConfig cfg;
  cfg.num_blocks = 8;
  cfg.block_size = 4;
  cfg.enable_prefix_cache = false;
  auto kv = std::move(KvCacheManager::create(cfg)).value();
  EXPECT_EQ(run_prompt(*kv, 1, range(0, 9)), 0);
  EXPECT_EQ(run_prompt(*kv, 2, range(0, 9)), 0);
  expect_ok(kv->free_sequence(1));
  EXPECT_EQ(kv->stats().blocks.cached, 0);
}

}  // namespace
}  // namespace hearth::kv
