#include "engine/kv/kv_cache_manager.h"

#include <algorithm>
#include <cassert>
#include <string>

namespace hearth::kv {

Result<std::unique_ptr<KvCacheManager>> KvCacheManager::create(const KvCacheConfig& config) {
  HEARTH_ASSIGN_OR_RETURN(BlockPool pool, BlockPool::create(config.num_blocks, config.block_size));
  return std::unique_ptr<KvCacheManager>(new KvCacheManager(config, std::move(pool)));
}

KvCacheManager::KvCacheManager(const KvCacheConfig& config, BlockPool pool)
    : pool_(std::move(pool)),
      prefix_(config.num_blocks, config.block_size, config.extra_key, config.hash_fn),
      prefix_enabled_(config.enable_prefix_cache) {
  pool_.set_evict_hook([this](BlockId id) { prefix_.erase(id); });
}

int32_t KvCacheManager::blocks_for_tokens(int32_t tokens) const {
  if (tokens <= 0) return 0;
  return static_cast<int32_t>((int64_t{tokens} + block_size() - 1) / block_size());
}

PrefixMatch KvCacheManager::match_prompt(std::span<const int32_t> prompt) const {
  if (!prefix_enabled_ || prompt.size() < 2) return {};
  return prefix_.match(prompt.first(prompt.size() - 1));
}

PromptAdmission KvCacheManager::estimate_prompt(std::span<const int32_t> prompt, int32_t max_new_tokens) const {
  const PrefixMatch m = match_prompt(prompt);
  PromptAdmission a;
  a.cached_tokens = m.num_tokens;
  const auto remaining = static_cast<int64_t>(prompt.size()) - m.num_tokens;
  a.new_tokens = static_cast<int32_t>(std::clamp<int64_t>(remaining, 0, std::max(max_new_tokens, 0)));
  const auto revived =
      std::count_if(m.blocks.begin(), m.blocks.end(), [&](BlockId b) { return pool_.ref_count(b) == 0; });
  a.blocks_needed = blocks_for_tokens(a.new_tokens) + static_cast<int32_t>(revived);
  return a;
}

Result<PromptAdmission> KvCacheManager::allocate_prompt(SeqId seq, std::span<const int32_t> prompt,
                                                        int32_t max_new_tokens) {
  if (prompt.empty()) return make_error(ErrorCode::kInvalidArgument, "allocate_prompt: empty prompt");
  if (prompt.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return make_error(ErrorCode::kContextExceeded, "allocate_prompt: prompt longer than INT32_MAX tokens");
  }
  if (contains(seq)) {
    return make_error(ErrorCode::kInvalidArgument, "allocate_prompt: sequence " + std::to_string(seq) + " exists");
  }
  const PrefixMatch m = match_prompt(prompt);
  const PromptAdmission a = estimate_prompt(prompt, max_new_tokens);
  if (!pool_.can_allocate(a.blocks_needed)) {
    return make_error(ErrorCode::kOutOfMemory, "KV cache: prompt of " + std::to_string(prompt.size()) +
                                                   " tokens needs " + std::to_string(a.blocks_needed) + " blocks, " +
                                                   std::to_string(pool_.num_available()) + " available");
  }
  Sequence s{BlockTable(block_size()), m.links};
  for (BlockId b : m.blocks) pool_.share(b);  // before allocating: a revived hit must not be reused
  s.table.append_full_blocks(m.blocks);
  Result<void> fresh = s.table.append_tokens(a.new_tokens, pool_);
  assert(fresh.ok());  // availability checked above
  if (!fresh.ok()) {
    (void)s.table.release(pool_);
    return std::move(fresh).error();
  }
  prefix_.record_lookup(static_cast<int32_t>(prompt.size()), a.cached_tokens);
  seqs_.emplace(seq, std::move(s));
  return a;
}

Result<void> KvCacheManager::append_slots(SeqId seq, int32_t n) {
  const auto it = seqs_.find(seq);
  if (it == seqs_.end()) return make_error(ErrorCode::kNotFound, "append_slots: no sequence " + std::to_string(seq));
  return it->second.table.append_tokens(n, pool_);
}

Result<int32_t> KvCacheManager::blocks_needed(SeqId seq, int32_t n) const {
  const auto it = seqs_.find(seq);
  if (it == seqs_.end()) return make_error(ErrorCode::kNotFound, "blocks_needed: no sequence " + std::to_string(seq));
  return it->second.table.blocks_needed(n);
}

Result<void> KvCacheManager::commit(SeqId seq, std::span<const int32_t> tokens) {
  const auto it = seqs_.find(seq);
  if (it == seqs_.end()) return make_error(ErrorCode::kNotFound, "commit: no sequence " + std::to_string(seq));
  Sequence& s = it->second;
  if (tokens.size() > static_cast<size_t>(s.table.num_tokens())) {
    return make_error(ErrorCode::kInvalidArgument, "commit: " + std::to_string(tokens.size()) + " tokens but only " +
                                                       std::to_string(s.table.num_tokens()) + " slots reserved");
  }
  if (!prefix_enabled_) return {};
  const size_t bs = static_cast<size_t>(block_size());
  const size_t full = tokens.size() / bs;
  while (s.chain.size() < full) {
    const size_t i = s.chain.size();
    const ChainLink parent = i == 0 ? kRootLink : s.chain[i - 1];
    const BlockId id = s.table.blocks()[i];
    const PrefixCache::Inserted ins = prefix_.insert(id, parent, tokens.subspan(i * bs, bs));
    if (ins.indexed) pool_.mark_cached(id);
    s.chain.push_back(ins.link);
  }
  return {};
}

Result<void> KvCacheManager::free_sequence(SeqId seq) {
  const auto it = seqs_.find(seq);
  if (it == seqs_.end()) return make_error(ErrorCode::kNotFound, "free_sequence: no sequence " + std::to_string(seq));
  Result<void> r = it->second.table.release(pool_);
  seqs_.erase(it);
  return r;
}

const BlockTable* KvCacheManager::table(SeqId seq) const {
  const auto it = seqs_.find(seq);
  return it == seqs_.end() ? nullptr : &it->second.table;
}

KvCacheStats KvCacheManager::stats() const {
  KvCacheStats s;
  s.block_size = block_size();
  s.blocks = pool_.stats();
  s.prefix = prefix_.stats();
  s.sequences = static_cast<int32_t>(seqs_.size());
  return s;
}

Result<void> KvCacheManager::check_tables() const {
  std::vector<int32_t> holders(static_cast<size_t>(num_blocks()), 0);
  for (const auto& [seq, s] : seqs_) {
    const std::string name = "sequence " + std::to_string(seq);
    if (s.table.num_blocks() != blocks_for_tokens(s.table.num_tokens())) {
      return make_error(ErrorCode::kInternal, name + ": " + std::to_string(s.table.num_blocks()) + " blocks for " +
                                                  std::to_string(s.table.num_tokens()) + " tokens");
    }
    if (s.chain.size() > static_cast<size_t>(s.table.num_full_blocks())) {
      return make_error(ErrorCode::kInternal, name + ": hash chain longer than its full blocks");
    }
    for (BlockId b : s.table.blocks()) {
      if (b < 0 || b >= num_blocks()) return make_error(ErrorCode::kInternal, name + ": invalid block id");
      ++holders[static_cast<size_t>(b)];
    }
  }
  for (BlockId b = 0; b < num_blocks(); ++b) {
    if (holders[static_cast<size_t>(b)] != pool_.ref_count(b)) {
      return make_error(ErrorCode::kInternal, "block " + std::to_string(b) + " has ref count " +
                                                  std::to_string(pool_.ref_count(b)) + " but " +
                                                  std::to_string(holders[static_cast<size_t>(b)]) + " tables hold it");
    }
  }
  return {};
}

Result<void> KvCacheManager::check_invariants() const {
  HEARTH_TRY(pool_.check_invariants());
  HEARTH_TRY(prefix_.check_invariants());
  for (BlockId b = 0; b < num_blocks(); ++b) {
    if (pool_.is_cached(b) != prefix_.contains(b)) {
      return make_error(ErrorCode::kInternal, "block " + std::to_string(b) + (pool_.is_cached(b) ? " is" : " is not") +
                                                  " marked cached but the prefix cache disagrees");
    }
  }
  HEARTH_TRY(check_tables());
  const BlockPoolStats st = pool_.stats();
  if (st.free + st.used + st.cached != st.total || st.free < 0) {
    return make_error(ErrorCode::kInternal, "block states do not partition the pool");
  }
  return {};
}

}  // namespace hearth::kv
