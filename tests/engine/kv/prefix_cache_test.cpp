#include "engine/kv/prefix_cache.h"

#include <gtest/gtest.h>

#include <vector>

namespace hearth::kv {
namespace {

using Tokens = std::vector<int32_t>;

Tokens concat(std::initializer_list<Tokens> parts) {
  Tokens out;
  for (const Tokens& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// Inserts the full blocks of `tokens` into `cache` as blocks `ids`.
void insert_chain(PrefixCache& cache, const Tokens& tokens, const std::vector<BlockId>& ids) {
  ChainLink link = kRootLink;
  const auto bs = static_cast<size_t>(cache.block_size());
  for (size_t i = 0; i < ids.size(); ++i) {
    link = cache.insert(ids[i], link, std::span<const int32_t>(tokens).subspan(i * bs, bs)).link;
  }
}

const Tokens kX{1, 2, 3}, kY{4, 5, 6}, kZ{7, 8, 9}, kW{1, 2, 4};

TEST(DefaultBlockHash, DependsOnParentTokensAndExtraKey) {
  const uint64_t base = default_block_hash(5, kX, 0);
  EXPECT_EQ(base, default_block_hash(5, kX, 0));
  EXPECT_NE(base, default_block_hash(6, kX, 0));
  EXPECT_NE(base, default_block_hash(5, kW, 0));
  EXPECT_NE(base, default_block_hash(5, kX, 1));
  EXPECT_NE(default_block_hash(0, Tokens{1, 2}, 0), default_block_hash(0, Tokens{2, 1}, 0));
}

TEST(PrefixCache, MatchesTheLongestChainOfFullBlocks) {
  PrefixCache cache(8, 3, 0);
  insert_chain(cache, concat({kX, kY, kZ}), {4, 2, 6});
  const struct {
    Tokens prompt;
    std::vector<BlockId> blocks;
  } cases[] = {
      {concat({kX, kY, kZ}), {4, 2, 6}},
      {concat({kX, kY, kZ, {1, 1}}), {4, 2, 6}},  // trailing partial block ignored
      {concat({kX, kY, {7, 8}}), {4, 2}},         // partial third block never matches
      {concat({kX, kZ, kY}), {4}},                // same block, other position: miss
      {concat({kY, kY}), {}},
      {concat({kW, kY}), {}},
      {Tokens{1, 2}, {}},
  };
  for (const auto& c : cases) {
    const PrefixMatch m = cache.match(c.prompt);
    EXPECT_EQ(m.blocks, c.blocks);
    EXPECT_EQ(m.num_tokens, static_cast<int32_t>(c.blocks.size()) * 3);
    EXPECT_EQ(m.links.size(), c.blocks.size());
  }
  EXPECT_TRUE(cache.check_invariants().ok());
}

TEST(PrefixCache, ForcedCollisionIsCaughtByTokenEquality) {
  PrefixCache cache(4, 3, 0, [](uint64_t, std::span<const int32_t>, uint64_t) { return uint64_t{42}; });
  insert_chain(cache, kX, {1});
  EXPECT_TRUE(cache.match(kW).blocks.empty());  // same hash, different tokens
  EXPECT_EQ(cache.match(kX).blocks, std::vector<BlockId>{1});
  // Registering colliding contents breaks the chain instead of aliasing.
  const PrefixCache::Inserted ins = cache.insert(2, kRootLink, kW);
  EXPECT_FALSE(ins.indexed);
  EXPECT_EQ(ins.link.uid, 0u);
  EXPECT_FALSE(cache.contains(2));
  EXPECT_TRUE(cache.check_invariants().ok());
}

TEST(PrefixCache, ParentIdentityIsVerifiedNotJustTheBlockHash) {
  // A hash that ignores the parent: [Y, Z] chains to the same hash as [X, Z].
  PrefixCache cache(8, 3, 0, [](uint64_t, std::span<const int32_t> t, uint64_t) { return uint64_t(t[0]); });
  insert_chain(cache, concat({kX, kZ}), {0, 1});
  insert_chain(cache, kY, {2});
  EXPECT_EQ(cache.match(concat({kY, kZ})).blocks, std::vector<BlockId>{2});
  EXPECT_EQ(cache.match(concat({kX, kZ})).blocks, (std::vector<BlockId>{0, 1}));
}

TEST(PrefixCache, DuplicateContentsContinueThroughTheIndexedCopy) {
  PrefixCache cache(8, 3, 0);
  insert_chain(cache, kX, {0});
  const PrefixCache::Inserted dup = cache.insert(5, kRootLink, kX);
  EXPECT_FALSE(dup.indexed);
  EXPECT_NE(dup.link.uid, 0u);
  // The duplicate's successor is registered under the indexed copy's chain.
  ASSERT_TRUE(cache.insert(6, dup.link, kY).indexed);
  EXPECT_EQ(cache.match(concat({kX, kY})).blocks, (std::vector<BlockId>{0, 6}));
}

TEST(PrefixCache, ErasedParentMakesDescendantsUnreachable) {
  PrefixCache cache(8, 3, 0);
  insert_chain(cache, concat({kX, kY}), {0, 1});
  cache.erase(0);
  EXPECT_EQ(cache.stats().evictions, 1);
  insert_chain(cache, kX, {3});  // block memory reused and refilled: a new identity
  EXPECT_EQ(cache.match(concat({kX, kY})).blocks, std::vector<BlockId>{3});
  cache.erase(3);
  cache.erase(3);  // not indexed any more: no second eviction
  EXPECT_EQ(cache.stats().evictions, 2);
  EXPECT_TRUE(cache.check_invariants().ok());
}

}  // namespace
}  // namespace hearth::kv
