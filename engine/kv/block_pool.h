// The KV block pool: N fixed-size blocks of `block_size` token slots each,
// handed out by id. Pure bookkeeping: the K/V values live in the backend's
// storage, indexed by block id. Every operation is O(1).
//
// Each block is in exactly one state:
//   used   ref_count > 0 (held by one or more sequences; may also be cached)
//   cached ref_count == 0 and marked cached (its contents are findable by the
//          prefix cache until the block is reused)
//   free   ref_count == 0 and not cached
// Free and cached blocks sit in one reuse queue; allocate() takes the front.
// Released free blocks go to the front (they hold nothing worth keeping),
// released cached blocks to the back, so cached blocks are reused in
// least-recently-released order (LRU).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "hearth/result.h"

namespace hearth::kv {

using BlockId = int32_t;
inline constexpr BlockId kNoBlock = -1;
inline constexpr int32_t kDefaultBlockSize = 16;  // tokens per block

// Whole blocks that fit in `budget_bytes` (capped at INT32_MAX).
Result<int32_t> blocks_for_budget(uint64_t budget_bytes, uint64_t bytes_per_block);

struct BlockPoolStats {
  int32_t total = 0;   // blocks
  int32_t free = 0;    // ref 0, not cached
  int32_t used = 0;    // ref > 0
  int32_t cached = 0;  // ref 0, cached
};

class BlockPool {
 public:
  // Called by allocate() when it reuses a cached block, before handing it out,
  // so the prefix cache can forget the block's old contents.
  using EvictHook = std::function<void(BlockId)>;

  static Result<BlockPool> create(int32_t num_blocks, int32_t block_size = kDefaultBlockSize);

  int32_t num_blocks() const { return static_cast<int32_t>(ref_.size()); }
  int32_t block_size() const { return block_size_; }
  // Blocks allocate() can hand out now: free plus cached.
  int32_t num_available() const { return num_available_; }
  bool can_allocate(int32_t n) const { return n <= num_available_; }

  // Takes the front of the reuse queue with ref_count 1; kOutOfMemory when none.
  Result<BlockId> allocate();
  // Adds a reference. A ref-0 block (a prefix-cache hit) leaves the reuse queue.
  // Precondition: `id` is valid; a free (uncached) ref-0 block holds nothing to share.
  void share(BlockId id);
  // Drops a reference; at 0 the block joins the reuse queue (see above).
  // kInternal on an invalid id or a block that holds no reference.
  Result<void> release(BlockId id);

  int32_t ref_count(BlockId id) const { return ref_[static_cast<size_t>(id)]; }
  bool is_cached(BlockId id) const { return cached_[static_cast<size_t>(id)] != 0; }
  // Marks a used block's contents as findable (prefix cache registration).
  void mark_cached(BlockId id);
  void set_evict_hook(EvictHook hook) { evict_hook_ = std::move(hook); }

  BlockPoolStats stats() const;
  // Reuse queue front to back (the next block allocate() takes first).
  std::vector<BlockId> reuse_order() const;
  // Checks the queue links, counts and ref/queue agreement.
  Result<void> check_invariants() const;

 private:
  BlockPool(int32_t num_blocks, int32_t block_size);
  bool valid(BlockId id) const { return id >= 0 && id < num_blocks(); }
  void unlink(BlockId id);
  void push_front(BlockId id);
  void push_back(BlockId id);

  int32_t block_size_ = kDefaultBlockSize;
  int32_t num_available_ = 0;
  int32_t num_cached_ = 0;       // cached blocks with ref 0
  std::vector<int32_t> ref_;     // [num_blocks] reference counts, never negative
  std::vector<uint8_t> cached_;  // [num_blocks] 1 when the prefix cache indexes the block
  // Intrusive doubly linked reuse queue over block ids; index num_blocks is the
  // sentinel. A block is linked iff its ref_count is 0.
  std::vector<int32_t> next_;  // [num_blocks + 1]
  std::vector<int32_t> prev_;  // [num_blocks + 1]
  EvictHook evict_hook_;
};

}  // namespace hearth::kv
