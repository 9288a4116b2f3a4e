#include "engine/tokenizer/bpe_merge.h"

#include <algorithm>
#include <cstdio>

#include "engine/tokenizer/byte_unicode.h"
#include "engine/tokenizer/pre_tokenizer.h"

namespace hearth::tokenizer {
namespace {

using Candidate = BpeScratch::Candidate;

// std heap functions build a max-heap: "less" means popped later. We pop the
// lowest rank first, then the leftmost pair.
bool pops_later(const Candidate& a, const Candidate& b) {
  return a.rank != b.rank ? a.rank > b.rank : a.left > b.left;
}

void push_candidate(const Vocabulary& vocab, BpeScratch& s, std::int32_t left, std::int32_t right) {
  const TokenId l = s.symbols[static_cast<std::size_t>(left)].id;
  const TokenId r = s.symbols[static_cast<std::size_t>(right)].id;
  const Vocabulary::Merge* m = vocab.find_merge(l, r);
  if (m == nullptr) return;
  s.heap.push_back(Candidate{m->rank, left, right, l, r, m->result});
  std::push_heap(s.heap.begin(), s.heap.end(), pops_later);
}

bool is_current(const BpeScratch& s, const Candidate& c) {
  const auto& l = s.symbols[static_cast<std::size_t>(c.left)];
  const auto& r = s.symbols[static_cast<std::size_t>(c.right)];
  return l.id == c.left_id && l.next == c.right && r.id == c.right_id;
}

// A byte whose byte-level character is not in the vocabulary is dropped, as
// llama.cpp and HF tokenizers do (SmolLM2 lacks 6 control bytes, e.g. 0x13;
// its unknown id is <|endoftext|>, which must never come out of plain text).
void init_symbols(const Vocabulary& vocab, std::string_view word, BpeScratch& s) {
  s.symbols.clear();
  s.heap.clear();
  for (char c : word) {
    const std::optional<TokenId> id = vocab.byte_token(static_cast<unsigned char>(c));
    if (!id) continue;
    const auto index = static_cast<std::int32_t>(s.symbols.size());
    s.symbols.push_back({*id, index - 1, -1});
    if (index > 0) s.symbols[static_cast<std::size_t>(index - 1)].next = index;
  }
}

}  // namespace

Result<void> bpe_merge_word(const Vocabulary& vocab, std::string_view word, BpeScratch& s, std::vector<TokenId>& out) {
  if (word.empty()) return {};
  if (vocab.pre_tokenizer() != nullptr && vocab.pre_tokenizer()->ignore_merges()) {
    s.mapped.clear();
    for (char c : word) s.mapped += byte_to_unicode_utf8()[static_cast<unsigned char>(c)];
    if (auto id = vocab.find(s.mapped)) {
      out.push_back(*id);
      return {};
    }
  }
  init_symbols(vocab, word, s);
  const auto n = static_cast<std::int32_t>(s.symbols.size());
  if (n == 0) return {};
  for (std::int32_t i = 0; i + 1 < n; ++i) push_candidate(vocab, s, i, i + 1);

  while (!s.heap.empty()) {
    std::pop_heap(s.heap.begin(), s.heap.end(), pops_later);
    const Candidate c = s.heap.back();
    s.heap.pop_back();
    if (!is_current(s, c)) continue;
    auto& left = s.symbols[static_cast<std::size_t>(c.left)];
    auto& right = s.symbols[static_cast<std::size_t>(c.right)];
    left.id = c.result;
    left.next = right.next;
    if (right.next >= 0) s.symbols[static_cast<std::size_t>(right.next)].prev = c.left;
    right.id = -1;
    if (left.prev >= 0) push_candidate(vocab, s, left.prev, c.left);
    if (left.next >= 0) push_candidate(vocab, s, c.left, left.next);
  }
  for (std::int32_t i = 0; i >= 0; i = s.symbols[static_cast<std::size_t>(i)].next) {
    out.push_back(s.symbols[static_cast<std::size_t>(i)].id);
  }
  return {};
}

}  // namespace hearth::tokenizer
