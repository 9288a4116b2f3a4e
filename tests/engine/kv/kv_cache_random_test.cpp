// Thousands of seeded random admit / compute / extend / free operations on a
// small pool, with the invariants checked after every one, against a shadow
// K/V store: each slot records the identity of the prefix whose K/V it holds,
// so a prefix-cache hit that served the wrong contents is caught.
#include "engine/kv/kv_cache_manager.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

namespace hearth::kv {
namespace {

using Tokens = std::vector<int32_t>;

uint64_t mix(uint64_t h, int32_t t) {
  h ^= static_cast<uint64_t>(t) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdULL;
}

struct Seq {
  Tokens tokens;             // prompt, then decoded tokens
  std::vector<uint64_t> id;  // [tokens] identity of the prefix ending at each position
  int32_t prompt_len = 0;
  int32_t reserved = 0;
  int32_t computed = 0;
  void push(int32_t t) {
    id.push_back(mix(id.empty() ? 1 : id.back(), t));
    tokens.push_back(t);
  }
};

class RandomOps {
 public:
  RandomOps(BlockHashFn hash, uint64_t seed) : rng_(seed) {
    KvCacheConfig cfg;
    cfg.num_blocks = kBlocks;
    cfg.block_size = kBlockSize;
    cfg.hash_fn = std::move(hash);
    kv_ = std::move(KvCacheManager::create(cfg)).value();
    shadow_.assign(static_cast<size_t>(kBlocks * kBlockSize), 0);
    for (int s = 0; s < 3; ++s) systems_.push_back(random_tokens(4 * s + 3 * (s == 2)));
  }

  void step() {
    switch (pick(10)) {
      case 0:
      case 1:
      case 2:
        admit();
        break;
      case 3:
      case 4:
      case 5:
        compute();
        break;
      case 6:
      case 7:
        extend();
        break;
      default:
        finish();
        break;
    }
  }
  void finish_all() {
    while (!live_.empty()) finish();
  }
  const KvCacheManager& kv() const { return *kv_; }

 private:
  static constexpr int32_t kBlocks = 40;
  static constexpr int32_t kBlockSize = 4;

  int32_t pick(int32_t n) { return static_cast<int32_t>(rng_() % static_cast<uint64_t>(n)); }
  Tokens random_tokens(int32_t n) {
    Tokens t;
    for (int32_t i = 0; i < n; ++i) t.push_back(pick(3));  // tiny alphabet: accidental shared prefixes
    return t;
  }
  Seq* any_live() {
    if (live_.empty()) return nullptr;
    auto it = live_.begin();
    std::advance(it, pick(static_cast<int32_t>(live_.size())));
    current_ = it->first;
    return &it->second;
  }

  void admit() {
    Seq s;
    for (int32_t t : systems_[static_cast<size_t>(pick(3))]) s.push(t);
    for (int32_t t : random_tokens(1 + pick(10))) s.push(t);
    s.prompt_len = static_cast<int32_t>(s.tokens.size());
    const int32_t chunk = pick(2) == 0 ? kWholePrompt : 1 + pick(6);
    const KvCacheStats before = kv_->stats();
    Result<PromptAdmission> a = kv_->allocate_prompt(next_id_, s.tokens, chunk);
    if (!a.ok()) {
      ASSERT_EQ(a.error().code, ErrorCode::kOutOfMemory);
      ASSERT_FALSE(kv_->contains(next_id_));
      ASSERT_EQ(kv_->stats().blocks.used, before.blocks.used);
      ASSERT_EQ(kv_->stats().blocks.cached, before.blocks.cached);
      return;
    }
    ASSERT_LT(a->cached_tokens, s.prompt_len);
    ASSERT_EQ(a->cached_tokens % kBlockSize, 0);
    const BlockTable& table = *kv_->table(next_id_);
    for (int32_t pos = 0; pos < a->cached_tokens; ++pos) {
      ASSERT_EQ(shadow_[slot(table, pos)], s.id[static_cast<size_t>(pos)]) << "cache served other K/V at " << pos;
    }
    s.computed = a->cached_tokens;
    s.reserved = a->cached_tokens + a->new_tokens;
    ASSERT_EQ(table.num_tokens(), s.reserved);
    live_.emplace(next_id_++, std::move(s));
  }

  size_t slot(const BlockTable& table, int32_t pos) {
    Result<Slot> sl = table.slot(pos);
    EXPECT_TRUE(sl.ok());
    return static_cast<size_t>(sl->block * kBlockSize + sl->offset);
  }

  void compute() {
    Seq* s = any_live();
    if (s == nullptr) return;
    const BlockTable& table = *kv_->table(current_);
    for (int32_t pos = s->computed; pos < s->reserved; ++pos) {
      const BlockId block = table.blocks()[static_cast<size_t>(pos / kBlockSize)];
      ASSERT_EQ(kv_->pool().ref_count(block), 1) << "writing K/V into a shared block";
      shadow_[slot(table, pos)] = s->id[static_cast<size_t>(pos)];
    }
    s->computed = s->reserved;
    const std::span<const int32_t> done(s->tokens.data(), static_cast<size_t>(s->computed));
    ASSERT_TRUE(kv_->commit(current_, done).ok());
  }

  void extend() {
    Seq* s = any_live();
    if (s == nullptr || s->computed != s->reserved) return;
    const int32_t n = s->reserved < s->prompt_len ? std::min(1 + pick(6), s->prompt_len - s->reserved) : 1;
    if (s->reserved >= s->prompt_len) s->push(pick(3));  // decode: the sampled token
    const int32_t tokens_before = kv_->table(current_)->num_tokens();
    Result<void> r = kv_->append_slots(current_, n);
    if (!r.ok()) {
      ASSERT_EQ(r.error().code, ErrorCode::kOutOfMemory);
      ASSERT_EQ(kv_->table(current_)->num_tokens(), tokens_before);
      if (s->reserved >= s->prompt_len) {
        s->tokens.pop_back();
        s->id.pop_back();
      }
      return;
    }
    s->reserved += n;
  }

  void finish() {
    if (any_live() == nullptr) return;
    ASSERT_TRUE(kv_->free_sequence(current_).ok());
    live_.erase(current_);
  }

  std::mt19937_64 rng_;  // fully specified generator; only its raw output is used
  std::unique_ptr<KvCacheManager> kv_;
  std::vector<uint64_t> shadow_;  // [num_blocks * block_size] prefix identity per slot
  std::vector<Tokens> systems_;
  std::map<SeqId, Seq> live_;
  SeqId next_id_ = 1;
  SeqId current_ = 0;
};

void run(BlockHashFn hash, uint64_t seed, int steps) {
  RandomOps ops(std::move(hash), seed);
  for (int i = 0; i < steps; ++i) {
    ops.step();
    if (::testing::Test::HasFatalFailure()) FAIL() << "at step " << i;
    Result<void> inv = ops.kv().check_invariants();
    ASSERT_TRUE(inv.ok()) << "step " << i << ": " << inv.error().describe();
  }
  ops.finish_all();
  const KvCacheStats s = ops.kv().stats();
  EXPECT_EQ(s.blocks.used, 0);
  EXPECT_EQ(s.blocks.free + s.blocks.cached, s.blocks.total);
  EXPECT_GT(s.prefix.hit_tokens, 0);  // the workload does exercise the cache
  EXPECT_GT(s.prefix.evictions, 0);
  ASSERT_TRUE(ops.kv().check_invariants().ok());
}

TEST(KvCacheRandom, InvariantsHoldWithTheDefaultHash) {
  for (uint64_t seed : {1u, 2u, 3u}) run({}, seed, 4000);
}

TEST(KvCacheRandom, InvariantsHoldWithACollidingHash) {
  // 8 hash values for every block: most lookups land on a colliding entry.
  auto weak = [](uint64_t parent, std::span<const int32_t> t, uint64_t) {
    return (parent * 31 + static_cast<uint64_t>(t[0]) + static_cast<uint64_t>(t[1])) % 8;
  };
  for (uint64_t seed : {4u, 5u}) run(weak, seed, 4000);
}

}  // namespace
}  // namespace hearth::kv
