#include "engine/tokenizer/special_split.h"

#include <algorithm>
#include <span>
#include <string_view>

namespace hearth::tokenizer {

// Built from the texts in sorted order, so each new node is its parent's last
// child so far and the build needs a few words per node beyond the result
// (no per-node maps): the memory stays proportional to the special text.
SpecialMatcher::SpecialMatcher(const Vocabulary& vocab) {
  const std::span<const TokenId> specials = vocab.special_tokens();
  std::vector<std::uint32_t> order(specials.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  // By text, and among equal texts in special_tokens() order (longest first,
  // ties in id order): the first token that reaches a node keeps it.
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return vocab.token_text(specials[a]) < vocab.token_text(specials[b]);
  });
  struct Links {
    std::uint32_t first_child = 0, last_child = 0, next_sibling = 0;
    unsigned char label = 0;
  };
  std::size_t bound = 1;  // nodes at most: one per byte of special text, and the root
  for (const TokenId id : specials) bound += vocab.token_text(id).size();
  std::vector<Links> links(1);
  links.reserve(bound);
  nodes_.reserve(bound);
  nodes_.resize(1);
  std::vector<std::uint32_t> path{0};  // path[d]: the node of the previous text's first d bytes
  std::string_view previous;
  for (const std::uint32_t k : order) {
    const TokenId id = specials[k];
    const std::string_view text = vocab.token_text(id);
    std::size_t common = 0;
    while (common < text.size() && common < previous.size() && text[common] == previous[common]) ++common;
    path.resize(common + 1);
    for (std::size_t d = common; d < text.size(); ++d) {
      const std::uint32_t parent = path.back();
      const auto node = static_cast<std::uint32_t>(nodes_.size());
      nodes_.emplace_back();
      links.push_back({0, 0, 0, static_cast<unsigned char>(text[d])});
      if (links[parent].first_child == 0) {
        links[parent].first_child = node;
      } else {
        links[links[parent].last_child].next_sibling = node;
      }
      links[parent].last_child = node;
      path.push_back(node);
    }
    previous = text;
    Node& end = nodes_[path.back()];
    if (end.any < 0) end.any = id;
    if (end.plain < 0 && vocab.token_type(id) != TokenType::kControl) end.plain = id;
  }
  nodes_.shrink_to_fit();  // shared prefixes leave the bound unused
  labels_.reserve(nodes_.size() - 1);
  targets_.reserve(nodes_.size() - 1);
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    nodes_[i].first_edge = static_cast<std::uint32_t>(labels_.size());
    for (std::uint32_t c = links[i].first_child; c != 0; c = links[c].next_sibling) {
      labels_.push_back(links[c].label);
      targets_.push_back(c);
      if (i == 0) root_children_[links[c].label] = c;
    }
    nodes_[i].n_edges = static_cast<std::uint32_t>(labels_.size()) - nodes_[i].first_edge;
  }
}

std::size_t SpecialMatcher::heap_bytes() const {
  return nodes_.capacity() * sizeof(Node) + labels_.capacity() + targets_.capacity() * sizeof(std::uint32_t);
}

std::uint32_t SpecialMatcher::child(std::uint32_t node, unsigned char b) const {
  if (node == 0) return root_children_[b];
  const Node& n = nodes_[node];
  const auto first = labels_.begin() + n.first_edge;
  const auto last = first + n.n_edges;
  const auto it = std::lower_bound(first, last, b);
  if (it == last || *it != b) return 0;
  return targets_[static_cast<std::size_t>(it - labels_.begin())];
}

TokenId SpecialMatcher::match(std::string_view rest, bool parse_special) const {
  TokenId best = -1;
  std::uint32_t node = 0;
  for (char c : rest) {
    node = child(node, static_cast<unsigned char>(c));
    if (node == 0) break;
    const TokenId id = parse_special ? nodes_[node].any : nodes_[node].plain;
    if (id >= 0) best = id;  // deeper nodes are longer matches
  }
  return best;
}

void split_special(const Vocabulary& vocab, std::string_view text, bool parse_special, std::vector<Fragment>& out) {
  const SpecialMatcher& matcher = vocab.special_matcher();
  std::size_t plain_start = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const TokenId id = matcher.match(text.substr(pos), parse_special);
    if (id < 0) {
      ++pos;
      continue;
    }
    if (pos > plain_start) out.push_back({text.substr(plain_start, pos - plain_start), -1});
    out.push_back({{}, id});
    pos += vocab.token_text(id).size();
    plain_start = pos;
  }
  if (pos > plain_start) out.push_back({text.substr(plain_start), -1});
}

}  // namespace hearth::tokenizer
