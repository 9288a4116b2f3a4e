#include "engine/kv/prefix_cache.h"

#include <algorithm>
#include <cassert>
#include <string>

namespace hearth::kv {
namespace {

// The splitmix64 finalizer: a bijective 64-bit mix with full avalanche.
uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ULL;

}  // namespace

uint64_t default_block_hash(uint64_t parent_hash, std::span<const int32_t> tokens, uint64_t extra_key) {
  uint64_t h = mix64(parent_hash + kGolden) ^ mix64(extra_key ^ (tokens.size() * kGolden));
  for (int32_t t : tokens) h = mix64(h + kGolden + static_cast<uint32_t>(t));
  return h;
}

PrefixCache::PrefixCache(int32_t num_blocks, int32_t block_size, uint64_t extra_key, BlockHashFn hash)
    : block_size_(block_size),
      extra_key_(extra_key),
      hash_(hash ? std::move(hash) : BlockHashFn(default_block_hash)),
      entries_(static_cast<size_t>(num_blocks)),
      tokens_(static_cast<size_t>(num_blocks) * static_cast<size_t>(block_size)) {}

std::span<const int32_t> PrefixCache::tokens_of(BlockId id) const {
  return std::span<const int32_t>(tokens_).subspan(static_cast<size_t>(id) * static_cast<size_t>(block_size_),
                                                   static_cast<size_t>(block_size_));
}

bool PrefixCache::verify(BlockId id, uint64_t parent_uid, std::span<const int32_t> tokens) const {
  const std::span<const int32_t> stored = tokens_of(id);
  return entries_[static_cast<size_t>(id)].parent_uid == parent_uid &&
         std::equal(stored.begin(), stored.end(), tokens.begin(), tokens.end());
}

PrefixMatch PrefixCache::match(std::span<const int32_t> tokens) const {
  PrefixMatch m;
  ChainLink link = kRootLink;
  const size_t bs = static_cast<size_t>(block_size_);
  for (size_t start = 0; start + bs <= tokens.size(); start += bs) {
    const std::span<const int32_t> block = tokens.subspan(start, bs);
    const uint64_t h = hash_(link.hash, block, extra_key_);
    const auto it = by_hash_.find(h);
    if (it == by_hash_.end() || !verify(it->second, link.uid, block)) break;
    link = ChainLink{h, entries_[static_cast<size_t>(it->second)].uid};
    m.blocks.push_back(it->second);
    m.links.push_back(link);
  }
  m.num_tokens = static_cast<int32_t>(m.blocks.size()) * block_size_;
  return m;
}

PrefixCache::Inserted PrefixCache::insert(BlockId id, const ChainLink& parent, std::span<const int32_t> tokens) {
  assert(tokens.size() == static_cast<size_t>(block_size_));
  assert(!contains(id));
  const uint64_t h = hash_(parent.hash, tokens, extra_key_);
  if (parent.uid == 0) return {ChainLink{h, 0}, false};
  const auto it = by_hash_.find(h);
  if (it != by_hash_.end()) {
    // Same contents computed twice (two sequences raced): continue through the
    // indexed copy. Anything else is a hash collision: the chain breaks.
    if (verify(it->second, parent.uid, tokens))
      return {ChainLink{h, entries_[static_cast<size_t>(it->second)].uid}, false};
    return {ChainLink{h, 0}, false};
  }
  Entry& e = entries_[static_cast<size_t>(id)];
  e = Entry{h, next_uid_++, parent.uid};
  std::copy(tokens.begin(), tokens.end(),
            tokens_.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(id) * static_cast<size_t>(block_size_)));
  by_hash_.emplace(h, id);
  ++stats_.inserted_blocks;
  return {ChainLink{h, e.uid}, true};
}

void PrefixCache::erase(BlockId id) {
  Entry& e = entries_[static_cast<size_t>(id)];
  if (e.uid == 0) return;
  by_hash_.erase(e.hash);
  e = Entry{};
  ++stats_.evictions;
}

void PrefixCache::record_lookup(int32_t queried_tokens, int32_t hit_tokens) {
  ++stats_.lookups;
  stats_.queried_tokens += queried_tokens;
  stats_.hit_tokens += hit_tokens;
}

Result<void> PrefixCache::check_invariants() const {
  size_t indexed = 0;
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    if (e.uid == 0) continue;
    ++indexed;
    const auto it = by_hash_.find(e.hash);
    if (it == by_hash_.end() || it->second != static_cast<BlockId>(i)) {
      return make_error(ErrorCode::kInternal,
                        "prefix cache: block " + std::to_string(i) + " is not indexed by its hash");
    }
  }
  if (indexed != by_hash_.size()) {
    return make_error(ErrorCode::kInternal, "prefix cache: hash index holds " + std::to_string(by_hash_.size()) +
                                                " entries, blocks " + std::to_string(indexed));
  }
  return {};
}

}  // namespace hearth::kv
