// Byte-level BPE of one pre-tokenized word: bytes to byte tokens, then the
// adjacent pair of lowest merge rank is merged (leftmost first on ties) until
// no pair of the current tokens has a merge. O(n log n) in the word's bytes
// with a heap of candidate pairs checked lazily when popped.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/tokenizer/vocabulary.h"
#include "hearth/result.h"

namespace hearth::tokenizer {

// Reusable buffers of bpe_merge_word (not thread-safe).
struct BpeScratch {
  struct Symbol {
    TokenId id;         // -1 once merged into its left neighbour
    std::int32_t prev;  // symbol index, -1 at the start
    std::int32_t next;  // symbol index, -1 at the end
  };
  struct Candidate {
    std::int32_t rank;
    std::int32_t left;  // symbol indices
    std::int32_t right;
    TokenId left_id;  // ids when pushed: a changed id means the candidate is stale
    TokenId right_id;
    TokenId result;
  };
  std::vector<Symbol> symbols;
  std::vector<Candidate> heap;
  std::string mapped;  // the word in byte-level characters (ignore_merges lookups)
};

// Appends the tokens of `word` to `out`. A byte without a token is dropped
// (as llama.cpp and HF tokenizers do); never an error.
// Precondition: vocab.kind() == ModelKind::kBpe.
Result<void> bpe_merge_word(const Vocabulary& vocab, std::string_view word, BpeScratch& scratch,
                            std::vector<TokenId>& out);

}  // namespace hearth::tokenizer
