#include "engine/tokenizer/special_split.h"

#include <algorithm>
#include <map>

namespace hearth::tokenizer {

SpecialMatcher::SpecialMatcher(const Vocabulary& vocab) {
  // Built with ordered child maps, then flattened to sorted edge arrays.
  std::vector<std::map<unsigned char, std::uint32_t>> kids(1);
  nodes_.resize(1);
  // special_tokens() is longest first, ties in id order: the first token that
  // reaches a node keeps it, as the first hit of a scan in that order would.
  for (TokenId id : vocab.special_tokens()) {
    std::uint32_t node = 0;
    for (char c : vocab.token_text(id)) {
      const auto [it, inserted] = kids[node].try_emplace(static_cast<unsigned char>(c), 0u);
      if (inserted) {
        it->second = static_cast<std::uint32_t>(nodes_.size());
        nodes_.emplace_back();
        kids.emplace_back();
      }
      node = it->second;
    }
    Node& end = nodes_[node];
    if (end.any < 0) end.any = id;
    if (end.plain < 0 && vocab.token_type(id) != TokenType::kControl) end.plain = id;
  }
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    nodes_[i].first_edge = static_cast<std::uint32_t>(labels_.size());
    nodes_[i].n_edges = static_cast<std::uint32_t>(kids[i].size());
    for (const auto& [b, target] : kids[i]) {
      labels_.push_back(b);
      targets_.push_back(target);
    }
  }
  for (const auto& [b, target] : kids[0]) root_children_[b] = target;
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
