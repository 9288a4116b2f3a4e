#include "engine/kv/block_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace hearth::kv {
namespace {

BlockPool make_pool(int32_t n, int32_t block_size = 16) {
  Result<BlockPool> pool = BlockPool::create(n, block_size);
  EXPECT_TRUE(pool.ok());
  return std::move(pool).value();
}

void expect_stats(const BlockPool& pool, int32_t free, int32_t used, int32_t cached) {
  const BlockPoolStats s = pool.stats();
  EXPECT_EQ(s.free, free);
  EXPECT_EQ(s.used, used);
  EXPECT_EQ(s.cached, cached);
  EXPECT_EQ(s.total, free + used + cached);
  Result<void> inv = pool.check_invariants();
  EXPECT_TRUE(inv.ok()) << (inv.ok() ? "" : inv.error().describe());
}

TEST(BlocksForBudget, TableOfBudgets) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  const struct {
    uint64_t budget, per_block;
    int32_t expected;
  } cases[] = {{1000, 100, 10},
               {999, 100, 9},
               {99, 100, 0},
               {0, 7, 0},
               {kMax, 1, std::numeric_limits<int32_t>::max()},
               {368640ULL * 1000 + 5, 368640, 1000}};
  for (const auto& c : cases) {
    Result<int32_t> n = blocks_for_budget(c.budget, c.per_block);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, c.expected) << c.budget << " / " << c.per_block;
  }
  Result<int32_t> zero = blocks_for_budget(100, 0);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().code, ErrorCode::kInvalidArgument);
}

TEST(BlockPool, CreateRejectsBadSizes) {
  EXPECT_FALSE(BlockPool::create(0, 16).ok());
  EXPECT_FALSE(BlockPool::create(-3, 16).ok());
  EXPECT_FALSE(BlockPool::create(4, 0).ok());
}

TEST(BlockPool, AllocatesEveryBlockOnceThenReportsOutOfMemory) {
  BlockPool pool = make_pool(5);
  std::vector<BlockId> ids;
  for (int i = 0; i < 5; ++i) {
    Result<BlockId> id = pool.allocate();
    ASSERT_TRUE(id.ok());
    EXPECT_EQ(pool.ref_count(*id), 1);
    ids.push_back(*id);
  }
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<BlockId>{0, 1, 2, 3, 4}));
  expect_stats(pool, 0, 5, 0);
  Result<BlockId> none = pool.allocate();
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, ErrorCode::kOutOfMemory);
  expect_stats(pool, 0, 5, 0);
}

TEST(BlockPool, SharingCountsReferencesAndNeverGoesNegative) {
  BlockPool pool = make_pool(3);
  const BlockId a = *pool.allocate();
  pool.mark_cached(a);
  pool.share(a);
  pool.share(a);
  EXPECT_EQ(pool.ref_count(a), 3);
  for (int expected : {2, 1, 0}) {
    ASSERT_TRUE(pool.release(a).ok());
    EXPECT_EQ(pool.ref_count(a), expected);
  }
  expect_stats(pool, 2, 0, 1);
  Result<void> twice = pool.release(a);
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().code, ErrorCode::kInternal);
  EXPECT_EQ(pool.ref_count(a), 0);
  EXPECT_FALSE(pool.release(17).ok());
  expect_stats(pool, 2, 0, 1);
  pool.share(a);  // a prefix-cache hit revives the cached block
  EXPECT_EQ(pool.ref_count(a), 1);
  expect_stats(pool, 2, 1, 0);
}

TEST(BlockPool, FreeBlocksAreReusedBeforeCachedOnesAndCachedInReleaseOrder) {
  BlockPool pool = make_pool(4);
  std::vector<BlockId> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(*pool.allocate());
  pool.mark_cached(ids[0]);
  pool.mark_cached(ids[2]);
  std::vector<BlockId> evicted;
  pool.set_evict_hook([&](BlockId id) { evicted.push_back(id); });
  // Release order: cached 2, free 1, cached 0, free 3.
  for (int i : {2, 1, 0, 3}) ASSERT_TRUE(pool.release(ids[static_cast<size_t>(i)]).ok());
  EXPECT_EQ(pool.reuse_order(), (std::vector<BlockId>{ids[3], ids[1], ids[2], ids[0]}));
  expect_stats(pool, 2, 0, 2);
  std::vector<BlockId> got;
  for (int i = 0; i < 4; ++i) got.push_back(*pool.allocate());
  EXPECT_EQ(got, (std::vector<BlockId>{ids[3], ids[1], ids[2], ids[0]}));
  EXPECT_EQ(evicted, (std::vector<BlockId>{ids[2], ids[0]}));  // only cached blocks are evictions
  EXPECT_FALSE(pool.is_cached(ids[0]));
  expect_stats(pool, 0, 4, 0);
}

}  // namespace
}  // namespace hearth::kv
