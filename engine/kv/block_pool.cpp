#include "engine/kv/block_pool.h"

#include <cassert>
#include <limits>
#include <string>

namespace hearth::kv {

Result<int32_t> blocks_for_budget(uint64_t budget_bytes, uint64_t bytes_per_block) {
  if (bytes_per_block == 0) return make_error(ErrorCode::kInvalidArgument, "bytes_per_block must be positive");
  const uint64_t n = budget_bytes / bytes_per_block;
  constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<int32_t>::max());
  return static_cast<int32_t>(n < kMax ? n : kMax);
}

Result<BlockPool> BlockPool::create(int32_t num_blocks, int32_t block_size) {
  if (num_blocks <= 0 || num_blocks == std::numeric_limits<int32_t>::max()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "num_blocks must be in [1, INT32_MAX), got " + std::to_string(num_blocks));
  }
  if (block_size <= 0) {
    return make_error(ErrorCode::kInvalidArgument, "block_size must be positive, got " + std::to_string(block_size));
  }
  return BlockPool(num_blocks, block_size);
}

BlockPool::BlockPool(int32_t num_blocks, int32_t block_size)
    : block_size_(block_size),
      ref_(static_cast<size_t>(num_blocks), 0),
      cached_(static_cast<size_t>(num_blocks), 0),
      next_(static_cast<size_t>(num_blocks) + 1),
      prev_(static_cast<size_t>(num_blocks) + 1) {
  const int32_t sentinel = num_blocks;
  next_[static_cast<size_t>(sentinel)] = sentinel;
  prev_[static_cast<size_t>(sentinel)] = sentinel;
  for (BlockId id = 0; id < num_blocks; ++id) push_back(id);
}

void BlockPool::unlink(BlockId id) {
  const auto i = static_cast<size_t>(id);
  next_[static_cast<size_t>(prev_[i])] = next_[i];
  prev_[static_cast<size_t>(next_[i])] = prev_[i];
  next_[i] = prev_[i] = id;
  --num_available_;
}

void BlockPool::push_front(BlockId id) {
  const int32_t sentinel = num_blocks();
  const auto i = static_cast<size_t>(id);
  const int32_t first = next_[static_cast<size_t>(sentinel)];
  next_[i] = first;
  prev_[i] = sentinel;
  prev_[static_cast<size_t>(first)] = id;
  next_[static_cast<size_t>(sentinel)] = id;
  ++num_available_;
}

void BlockPool::push_back(BlockId id) {
  const int32_t sentinel = num_blocks();
  const auto i = static_cast<size_t>(id);
  const int32_t last = prev_[static_cast<size_t>(sentinel)];
  prev_[i] = last;
  next_[i] = sentinel;
  next_[static_cast<size_t>(last)] = id;
  prev_[static_cast<size_t>(sentinel)] = id;
  ++num_available_;
}

Result<BlockId> BlockPool::allocate() {
  if (num_available_ == 0) {
    return make_error(ErrorCode::kOutOfMemory,
                      "KV block pool exhausted: all " + std::to_string(num_blocks()) + " blocks in use");
  }
  const BlockId id = next_[static_cast<size_t>(num_blocks())];
  unlink(id);
  ref_[static_cast<size_t>(id)] = 1;
  if (cached_[static_cast<size_t>(id)] != 0) {
    cached_[static_cast<size_t>(id)] = 0;
    --num_cached_;
    if (evict_hook_) evict_hook_(id);
  }
  return id;
}

void BlockPool::share(BlockId id) {
  assert(valid(id));
  if (!valid(id)) return;
  int32_t& ref = ref_[static_cast<size_t>(id)];
  if (ref == 0) {
    assert(is_cached(id) && "sharing a free block: it holds no contents");
    unlink(id);
    if (is_cached(id)) --num_cached_;
  }
  ++ref;
}

Result<void> BlockPool::release(BlockId id) {
  if (!valid(id)) return make_error(ErrorCode::kInternal, "release of invalid block id " + std::to_string(id));
  int32_t& ref = ref_[static_cast<size_t>(id)];
  if (ref == 0) {
    return make_error(ErrorCode::kInternal, "release of block " + std::to_string(id) + " that holds no reference");
  }
  if (--ref > 0) return {};
  if (is_cached(id)) {
    push_back(id);
    ++num_cached_;
  } else {
    push_front(id);
  }
  return {};
}

void BlockPool::mark_cached(BlockId id) {
  assert(valid(id) && ref_count(id) > 0);
  if (!valid(id) || ref_count(id) == 0) return;
  cached_[static_cast<size_t>(id)] = 1;
}

BlockPoolStats BlockPool::stats() const {
  BlockPoolStats s;
  s.total = num_blocks();
  s.used = num_blocks() - num_available_;
  s.cached = num_cached_;
  s.free = num_available_ - num_cached_;
  return s;
}

std::vector<BlockId> BlockPool::reuse_order() const {
  std::vector<BlockId> order;
  order.reserve(static_cast<size_t>(num_available_));
  const int32_t sentinel = num_blocks();
  for (int32_t id = next_[static_cast<size_t>(sentinel)]; id != sentinel; id = next_[static_cast<size_t>(id)]) {
    order.push_back(id);
    if (order.size() > ref_.size()) break;  // a cycle: check_invariants reports it
  }
  return order;
}

Result<void> BlockPool::check_invariants() const {
  const std::vector<BlockId> order = reuse_order();
  if (static_cast<int32_t>(order.size()) != num_available_) {
    return make_error(ErrorCode::kInternal, "reuse queue holds " + std::to_string(order.size()) +
                                                " blocks, available count is " + std::to_string(num_available_));
  }
  std::vector<uint8_t> queued(ref_.size(), 0);
  int32_t prev = num_blocks();
  for (BlockId id : order) {
    if (!valid(id) || queued[static_cast<size_t>(id)] != 0) {
      return make_error(ErrorCode::kInternal, "reuse queue repeats or holds invalid block " + std::to_string(id));
    }
    if (prev_[static_cast<size_t>(id)] != prev) {
      return make_error(ErrorCode::kInternal, "reuse queue back link broken at block " + std::to_string(id));
    }
    queued[static_cast<size_t>(id)] = 1;
    prev = id;
  }
  int32_t cached_unused = 0;
  for (BlockId id = 0; id < num_blocks(); ++id) {
    const int32_t ref = ref_count(id);
    if (ref < 0) return make_error(ErrorCode::kInternal, "block " + std::to_string(id) + " has negative ref count");
    if ((ref == 0) != (queued[static_cast<size_t>(id)] != 0)) {
      return make_error(ErrorCode::kInternal, "block " + std::to_string(id) + " with ref count " + std::to_string(ref) +
                                                  " is misplaced in the reuse queue");
    }
    if (ref == 0 && is_cached(id)) ++cached_unused;
  }
  if (cached_unused != num_cached_) {
    return make_error(ErrorCode::kInternal, "cached block count " + std::to_string(num_cached_) + " but " +
                                                std::to_string(cached_unused) + " cached blocks are unreferenced");
  }
  return {};
}

}  // namespace hearth::kv
