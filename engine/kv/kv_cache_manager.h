// KvCacheManager: the block pool, the prefix cache and every sequence's block
// table behind one façade, the way the scheduler uses them:
//
//   estimate_prompt / allocate_prompt  admit a prompt: cached prefix blocks are
//                                      shared, fresh blocks reserved for the rest
//   append_slots                       reserve slots for the next chunk / decode token
//   commit                             after a forward step: index newly full blocks
//   free_sequence                      finish, cancel or preempt (tail first)
//   can_allocate / blocks_needed       "do k more blocks fit?"
//
// Invariants (check_invariants): every block is exactly one of free, used
// (ref > 0) or cached (ref 0 and indexed by the prefix cache); a block's ref
// count equals the number of block tables holding it.
//
// Not thread-safe: owned and called by the engine thread.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/kv/block_pool.h"
#include "engine/kv/block_table.h"
#include "engine/kv/prefix_cache.h"
#include "hearth/result.h"

namespace hearth::kv {

using SeqId = int64_t;

struct KvCacheConfig {
  int32_t num_blocks = 0;
  int32_t block_size = kDefaultBlockSize;  // tokens
  bool enable_prefix_cache = true;
  uint64_t extra_key = 0;  // mixed into every block hash: model identity, KV precision
  BlockHashFn hash_fn;     // empty: default_block_hash (tests inject colliding ones)
};

struct KvCacheStats {
  int32_t block_size = 0;
  BlockPoolStats blocks;
  PrefixCacheStats prefix;
  int32_t sequences = 0;
};

inline constexpr int32_t kWholePrompt = std::numeric_limits<int32_t>::max();

struct PromptAdmission {
  int32_t cached_tokens = 0;  // prefix served from the cache (whole blocks)
  int32_t new_tokens = 0;     // slots reserved beyond the cached prefix
  int32_t blocks_needed = 0;  // drop in available blocks: fresh ones plus revived cached ones
};

class KvCacheManager {
 public:
  static Result<std::unique_ptr<KvCacheManager>> create(const KvCacheConfig& config);
  KvCacheManager(const KvCacheManager&) = delete;
  KvCacheManager& operator=(const KvCacheManager&) = delete;

  int32_t block_size() const { return pool_.block_size(); }
  int32_t num_blocks() const { return pool_.num_blocks(); }
  int32_t num_available_blocks() const { return pool_.num_available(); }
  bool can_allocate(int32_t blocks) const { return pool_.can_allocate(blocks); }
  int32_t blocks_for_tokens(int32_t tokens) const;

  // What allocate_prompt would do, without doing it. At most prompt.size() - 1
  // tokens come from the cache, so at least one token is computed (its logits
  // are needed). `max_new_tokens` caps the slots reserved beyond the cached
  // prefix (a prefill chunk); kWholePrompt reserves the rest of the prompt.
  PromptAdmission estimate_prompt(std::span<const int32_t> prompt, int32_t max_new_tokens = kWholePrompt) const;

  // Starts sequence `seq`: shares the cached prefix blocks and reserves fresh
  // ones. All or nothing: kOutOfMemory leaves everything unchanged;
  // kInvalidArgument for an empty prompt or a `seq` already present. Counts a
  // prefix-cache lookup only when it succeeds.
  Result<PromptAdmission> allocate_prompt(SeqId seq, std::span<const int32_t> prompt,
                                          int32_t max_new_tokens = kWholePrompt);

  // Reserves `n` more token slots for `seq`; kOutOfMemory leaves it unchanged.
  Result<void> append_slots(SeqId seq, int32_t n);
  // Fresh blocks append_slots(seq, n) would allocate.
  Result<int32_t> blocks_needed(SeqId seq, int32_t n) const;

  // Declares that the K/V of `tokens` (the sequence's first tokens.size()
  // tokens, <= its reserved slots) are computed: newly full blocks are indexed
  // by the prefix cache. The partially filled last block never is.
  Result<void> commit(SeqId seq, std::span<const int32_t> tokens);

  // Releases the sequence's blocks, last first, and forgets it. kNotFound for
  // an unknown sequence.
  Result<void> free_sequence(SeqId seq);

  bool contains(SeqId seq) const { return seqs_.count(seq) != 0; }
  // The sequence's table (block ids for attention, slot mapping), or nullptr.
  const BlockTable* table(SeqId seq) const;

  // Read-only view of the pool (ref counts, reuse order) for tests and metrics.
  const BlockPool& pool() const { return pool_; }
  KvCacheStats stats() const;
  // The first violated invariant, if any (tests; debug builds after each step).
  Result<void> check_invariants() const;

 private:
  struct Sequence {
    BlockTable table;
    std::vector<ChainLink> chain;  // [committed full blocks] hash chain after each
  };
  KvCacheManager(const KvCacheConfig& config, BlockPool pool);
  PrefixMatch match_prompt(std::span<const int32_t> prompt) const;
  Result<void> check_tables() const;

  BlockPool pool_;
  PrefixCache prefix_;
  bool prefix_enabled_;
  std::unordered_map<SeqId, Sequence> seqs_;
};

}  // namespace hearth::kv
