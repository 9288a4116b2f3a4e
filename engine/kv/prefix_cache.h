// Automatic prefix caching: an index from the contents of full KV blocks to
// the blocks holding them, so a prompt that starts like an earlier one reuses
// its K/V instead of recomputing it.
//
// Block i of a sequence is keyed by the hash chain
//   h_i = hash(h_{i-1}, tokens of block i, extra_key),   h_{-1} = kRootHash
// where extra_key separates caches that must not mix (model, KV precision).
// A 64-bit hash can collide, so a hit is verified exactly: each entry stores
// its block's tokens and the registration id (uid) of its parent entry; a hit
// needs equal tokens and the parent uid of the block matched just before. Uids
// are never reused, so a block whose parent was evicted (and the parent's
// memory reused) is unreachable rather than wrong.
//
// This class holds the index and statistics only; reference counts and the
// reuse (LRU) order live in BlockPool, wired together by KvCacheManager.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/kv/block_pool.h"
#include "hearth/result.h"

namespace hearth::kv {

using BlockHashFn = std::function<uint64_t(uint64_t parent_hash, std::span<const int32_t> tokens, uint64_t extra_key)>;

// A 64-bit mix of the parent hash, the tokens and the extra key (not cryptographic).
uint64_t default_block_hash(uint64_t parent_hash, std::span<const int32_t> tokens, uint64_t extra_key);

inline constexpr uint64_t kRootHash = 0;

// Where a sequence's hash chain stands after one of its full blocks.
struct ChainLink {
  uint64_t hash = kRootHash;
  uint64_t uid = 0;  // the cache entry with these contents; 0: none (chain broken)
};
inline constexpr uint64_t kRootUid = 1;
inline constexpr ChainLink kRootLink{kRootHash, kRootUid};

struct PrefixMatch {
  std::vector<BlockId> blocks;   // matched blocks, in token order (no references taken)
  std::vector<ChainLink> links;  // [blocks.size()] the chain after each block
  int32_t num_tokens = 0;        // blocks.size() * block_size
};

struct PrefixCacheStats {
  int64_t lookups = 0;         // prompts looked up
  int64_t queried_tokens = 0;  // prompt tokens looked up
  int64_t hit_tokens = 0;      // of which found in the cache
  int64_t evictions = 0;       // cached blocks whose memory was reused
  int64_t inserted_blocks = 0;
  double hit_rate() const {
    return queried_tokens == 0 ? 0.0 : static_cast<double>(hit_tokens) / static_cast<double>(queried_tokens);
  }
};

class PrefixCache {
 public:
  PrefixCache(int32_t num_blocks, int32_t block_size, uint64_t extra_key, BlockHashFn hash = default_block_hash);

  int32_t block_size() const { return block_size_; }

  // The longest verified run of cached full blocks at the start of `tokens`.
  // Takes no references and records no statistics.
  PrefixMatch match(std::span<const int32_t> tokens) const;

  struct Inserted {
    ChainLink link;        // the chain after this block, for the sequence's next block
    bool indexed = false;  // true when `id` itself became findable
  };
  // Registers full block `id` holding `tokens` (block_size of them) after
  // `parent`. When an identical entry exists, the chain continues through it
  // and `id` stays unindexed; on a broken parent chain or a hash collision with
  // different contents, the chain breaks (uid 0).
  Inserted insert(BlockId id, const ChainLink& parent, std::span<const int32_t> tokens);

  // Forgets block `id` (its memory is being reused); counts an eviction.
  void erase(BlockId id);
  bool contains(BlockId id) const { return entries_[static_cast<size_t>(id)].uid != 0; }
  size_t size() const { return by_hash_.size(); }

  void record_lookup(int32_t queried_tokens, int32_t hit_tokens);
  const PrefixCacheStats& stats() const { return stats_; }

  // Checks that the hash index and the per-block entries agree.
  Result<void> check_invariants() const;

 private:
  struct Entry {
    uint64_t hash = 0;
    uint64_t uid = 0;  // 0: block not indexed
    uint64_t parent_uid = 0;
  };
  std::span<const int32_t> tokens_of(BlockId id) const;
  bool verify(BlockId id, uint64_t parent_uid, std::span<const int32_t> tokens) const;

  int32_t block_size_;
  uint64_t extra_key_;
  BlockHashFn hash_;
  uint64_t next_uid_ = kRootUid + 1;
  std::vector<Entry> entries_;   // [num_blocks]
  std::vector<int32_t> tokens_;  // [num_blocks][block_size] tokens of indexed blocks
  std::unordered_map<uint64_t, BlockId> by_hash_;
  PrefixCacheStats stats_;
};

}  // namespace hearth::kv
