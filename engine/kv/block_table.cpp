#include "engine/kv/block_table.h"

#include <cassert>
#include <limits>
#include <string>

namespace hearth::kv {

int32_t BlockTable::blocks_needed(int32_t n) const {
  if (n <= 0) return 0;
  const int64_t tokens = int64_t{num_tokens_} + n;
  const int64_t blocks = (tokens + block_size_ - 1) / block_size_;
  const int64_t needed = blocks - num_blocks();
  return static_cast<int32_t>(needed < std::numeric_limits<int32_t>::max() ? needed
                                                                           : std::numeric_limits<int32_t>::max());
}

Result<void> BlockTable::append_tokens(int32_t n, BlockPool& pool) {
  if (n < 0) return make_error(ErrorCode::kInvalidArgument, "append_tokens: negative token count " + std::to_string(n));
  if (int64_t{num_tokens_} + n > std::numeric_limits<int32_t>::max()) {
    return make_error(ErrorCode::kContextExceeded, "append_tokens: sequence length overflows int32");
  }
  const int32_t needed = blocks_needed(n);
  if (!pool.can_allocate(needed)) {
    return make_error(ErrorCode::kOutOfMemory, "KV cache: " + std::to_string(needed) + " blocks needed for " +
                                                   std::to_string(n) + " tokens, " +
                                                   std::to_string(pool.num_available()) + " available");
  }
  for (int32_t i = 0; i < needed; ++i) {
    Result<BlockId> id = pool.allocate();
    assert(id.ok());  // availability checked above
    if (!id.ok()) return std::move(id).error();
    blocks_.push_back(*id);
  }
  num_tokens_ += n;
  return {};
}

void BlockTable::append_full_blocks(std::span<const BlockId> blocks) {
  assert(num_tokens_ == num_blocks() * block_size_);
  blocks_.insert(blocks_.end(), blocks.begin(), blocks.end());
  num_tokens_ += static_cast<int32_t>(blocks.size()) * block_size_;
}

Result<Slot> BlockTable::slot(int32_t pos) const {
  if (pos < 0 || pos >= num_tokens_) {
    return make_error(ErrorCode::kInvalidArgument,
                      "slot: position " + std::to_string(pos) + " outside [0, " + std::to_string(num_tokens_) + ")");
  }
  return Slot{blocks_[static_cast<size_t>(pos / block_size_)], pos % block_size_};
}

Result<void> BlockTable::slot_mapping(int32_t begin, int32_t end, std::vector<int64_t>& out) const {
  if (begin < 0 || begin > end || end > num_tokens_) {
    return make_error(ErrorCode::kInvalidArgument, "slot_mapping: range [" + std::to_string(begin) + ", " +
                                                       std::to_string(end) + ") outside [0, " +
                                                       std::to_string(num_tokens_) + ")");
  }
  out.reserve(out.size() + static_cast<size_t>(end - begin));
  for (int32_t pos = begin; pos < end; ++pos) {
    const BlockId block = blocks_[static_cast<size_t>(pos / block_size_)];
    out.push_back(int64_t{block} * block_size_ + pos % block_size_);
  }
  return {};
}

Result<void> BlockTable::release(BlockPool& pool) {
  Result<void> first;
  for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it) {
    Result<void> r = pool.release(*it);
    if (!r.ok() && first.ok()) first = std::move(r);
  }
  blocks_.clear();
  num_tokens_ = 0;
  return first;
}

}  // namespace hearth::kv
