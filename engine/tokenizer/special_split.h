// Cuts text at the special tokens it contains, before BPE / SentencePiece.
// Matching is leftmost-longest: scanning left to right, at each position the
// longest special token text that starts there wins. User-defined tokens are
// always matched (they are part of the vocabulary's surface, as HF added
// tokens are); control tokens only when `parse_special` is set, otherwise
// their texts are tokenized like any other text.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/tokenizer/vocabulary.h"

namespace hearth::tokenizer {

struct Fragment {
  std::string_view text;  // plain text to tokenize (empty when token >= 0)
  TokenId token = -1;     // a matched special token
};

// A byte trie over the texts of Vocabulary::special_tokens(), built once with
// the vocabulary (immutable afterwards, safe to share between threads). A
// lookup walks one node per byte while the text still extends some special's
// prefix (binary search over a node's edges), independent of the number of
// special tokens.
class SpecialMatcher {
 public:
  explicit SpecialMatcher(const Vocabulary& vocab);

  // The special token with the longest text that is a prefix of `rest`; -1 if
  // none. Control tokens count only when `parse_special` is set. Among tokens
  // of the same text the first in special_tokens() order wins.
  TokenId match(std::string_view rest, bool parse_special) const;

  // The bytes its arrays take: about 21 per byte of special text at most.
  std::size_t heap_bytes() const;

 private:
  struct Node {
    std::uint32_t first_edge = 0;  // this node's children: edges [first_edge, first_edge + n_edges)
    std::uint32_t n_edges = 0;
    TokenId any = -1;    // token whose text ends here, control included
    TokenId plain = -1;  // same, control tokens excluded
  };
  // The child of `node` along byte b; 0 (the root, never a child) when absent.
  std::uint32_t child(std::uint32_t node, unsigned char b) const;

  std::vector<Node> nodes_;                         // nodes_[0] is the root (empty prefix)
  std::vector<unsigned char> labels_;               // edge bytes, sorted within each node
  std::vector<std::uint32_t> targets_;              // edge child nodes, parallel to labels_
  std::array<std::uint32_t, 256> root_children_{};  // the root's edges by byte; 0 = none
};

// Appends the fragments of `text` in order; text fragments are never empty.
void split_special(const Vocabulary& vocab, std::string_view text, bool parse_special, std::vector<Fragment>& out);

}  // namespace hearth::tokenizer
