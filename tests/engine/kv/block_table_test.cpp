#include "engine/kv/block_table.h"

#include <gtest/gtest.h>

#include <vector>

namespace hearth::kv {
namespace {

BlockPool make_pool(int32_t n, int32_t block_size) {
  return std::move(BlockPool::create(n, block_size)).value();
}

TEST(BlockTable, AppendsAllocateBlocksOnlyWhenABlockFills) {
  // block_size 4: running token count -> blocks held.
  const struct {
    int32_t append, tokens, blocks, needed_before;
  } steps[] = {{3, 3, 1, 1}, {1, 4, 1, 0}, {1, 5, 2, 1}, {0, 5, 2, 0}, {7, 12, 3, 1}, {5, 17, 5, 2}};
  BlockPool pool = make_pool(8, 4);
  BlockTable table(4);
  for (const auto& s : steps) {
    EXPECT_EQ(table.blocks_needed(s.append), s.needed_before);
    ASSERT_TRUE(table.append_tokens(s.append, pool).ok());
    EXPECT_EQ(table.num_tokens(), s.tokens);
    EXPECT_EQ(table.num_blocks(), s.blocks);
    EXPECT_EQ(pool.stats().used, s.blocks);
  }
  EXPECT_EQ(table.num_full_blocks(), 4);
}

TEST(BlockTable, ExhaustionLeavesTableAndPoolUnchanged) {
  BlockPool pool = make_pool(3, 4);
  BlockTable table(4);
  ASSERT_TRUE(table.append_tokens(6, pool).ok());  // 2 blocks
  const std::vector<BlockId> before(table.blocks().begin(), table.blocks().end());
  Result<void> r = table.append_tokens(7, pool);  // needs 2 more, 1 left
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kOutOfMemory);
  EXPECT_EQ(table.num_tokens(), 6);
  EXPECT_EQ(std::vector<BlockId>(table.blocks().begin(), table.blocks().end()), before);
  EXPECT_EQ(pool.num_available(), 1);
  EXPECT_TRUE(pool.check_invariants().ok());
  EXPECT_TRUE(table.append_tokens(6, pool).ok());  // exactly fills the last block
  EXPECT_FALSE(table.append_tokens(-1, pool).ok());
}

TEST(BlockTable, SlotMappingFollowsBlocks) {
  BlockPool pool = make_pool(6, 4);
  BlockId taken = *pool.allocate();  // so the table's blocks are not 0, 1, 2
  BlockTable table(4);
  ASSERT_TRUE(table.append_tokens(10, pool).ok());
  const std::span<const BlockId> b = table.blocks();
  ASSERT_EQ(b.size(), 3u);
  const struct {
    int32_t pos;
    size_t block_index;
    int32_t offset;
  } cases[] = {{0, 0, 0}, {3, 0, 3}, {4, 1, 0}, {7, 1, 3}, {9, 2, 1}};
  for (const auto& c : cases) {
    Result<Slot> s = table.slot(c.pos);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->block, b[c.block_index]) << c.pos;
    EXPECT_EQ(s->offset, c.offset) << c.pos;
  }
  EXPECT_FALSE(table.slot(10).ok());
  EXPECT_FALSE(table.slot(-1).ok());
  std::vector<int64_t> slots{-7};  // appended to, not replaced
  ASSERT_TRUE(table.slot_mapping(2, 6, slots).ok());
  EXPECT_EQ(slots, (std::vector<int64_t>{-7, b[0] * 4 + 2, b[0] * 4 + 3, b[1] * 4 + 0, b[1] * 4 + 1}));
  EXPECT_FALSE(table.slot_mapping(5, 11, slots).ok());
  ASSERT_TRUE(pool.release(taken).ok());
}

TEST(BlockTable, ReleaseReturnsEveryBlockTailFirst) {
  BlockPool pool = make_pool(4, 2);
  BlockTable table(2);
  ASSERT_TRUE(table.append_tokens(6, pool).ok());
  const std::vector<BlockId> b(table.blocks().begin(), table.blocks().end());
  for (BlockId id : b) pool.mark_cached(id);
  ASSERT_TRUE(table.release(pool).ok());
  EXPECT_EQ(table.num_tokens(), 0);
  EXPECT_TRUE(table.empty());
  // The never-used block first, then cached ones: tail evicted before the head.
  EXPECT_EQ(pool.reuse_order(), (std::vector<BlockId>{3, b[2], b[1], b[0]}));
  EXPECT_TRUE(pool.check_invariants().ok());
}

}  // namespace
}  // namespace hearth::kv
