// One sequence's block table: the ids of the blocks holding its K/V, in token
// order, and the number of token slots reserved. Token position p lives in
// block blocks()[p / block_size] at offset p % block_size. Only the last block
// may be partially filled.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/kv/block_pool.h"
#include "hearth/result.h"

namespace hearth::kv {

struct Slot {
  BlockId block = kNoBlock;
  int32_t offset = 0;  // token offset inside the block, [0, block_size)
};

class BlockTable {
 public:
  explicit BlockTable(int32_t block_size) : block_size_(block_size) {}

  int32_t block_size() const { return block_size_; }
  int32_t num_tokens() const { return num_tokens_; }  // reserved token slots
  int32_t num_blocks() const { return static_cast<int32_t>(blocks_.size()); }
  int32_t num_full_blocks() const { return num_tokens_ / block_size_; }
  std::span<const BlockId> blocks() const { return blocks_; }
  bool empty() const { return blocks_.empty(); }

  // Fresh blocks needed to reserve `n` more token slots.
  int32_t blocks_needed(int32_t n) const;

  // Reserves `n` more token slots, allocating fresh blocks from `pool` as
  // needed. All or nothing: kOutOfMemory leaves the table and the pool as they were.
  Result<void> append_tokens(int32_t n, BlockPool& pool);

  // Appends full blocks whose references the caller already holds (prefix-cache
  // hits). Precondition: the table ends on a block boundary.
  void append_full_blocks(std::span<const BlockId> blocks);

  // Where token position `pos` (0 <= pos < num_tokens) is stored.
  Result<Slot> slot(int32_t pos) const;
  // Appends the flat slot index block * block_size + offset of each position in
  // [begin, end) to `out`: the backend's K/V write addresses.
  Result<void> slot_mapping(int32_t begin, int32_t end, std::vector<int64_t>& out) const;

  // Releases every block to `pool`, last block first (so the tail of a
  // finished sequence is evicted before its prefix), and empties the table.
  // Returns the first release error, after releasing all the others.
  Result<void> release(BlockPool& pool);

 private:
  int32_t block_size_;
  int32_t num_tokens_ = 0;
  std::vector<BlockId> blocks_;  // [ceil(num_tokens / block_size)]
};

}  // namespace hearth::kv
