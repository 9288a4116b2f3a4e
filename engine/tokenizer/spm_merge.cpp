#include "engine/tokenizer/spm_merge.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "engine/core/utf8.h"

namespace hearth::tokenizer {
namespace {

using Bigram = SpmScratch::Bigram;

// Max-heap order: the highest score pops first, then the leftmost pair.
bool pops_later(const Bigram& a, const Bigram& b) {
  return a.score != b.score ? a.score < b.score : a.left > b.left;
}

bool mergeable(TokenType t) {
  return t == TokenType::kNormal || t == TokenType::kUserDefined || t == TokenType::kUndefined;
}

void push_bigram(const Vocabulary& vocab, std::string_view text, SpmScratch& s, std::int32_t left, std::int32_t right) {
  const auto& l = s.symbols[static_cast<std::size_t>(left)];
  const auto& r = s.symbols[static_cast<std::size_t>(right)];
  const auto id = vocab.find(text.substr(l.start, l.len + r.len));
  if (!id || !mergeable(vocab.token_type(*id))) return;
  s.heap.push_back(Bigram{vocab.score(*id), left, right, l.len + r.len});
  std::push_heap(s.heap.begin(), s.heap.end(), pops_later);
}

Result<void> emit_symbol(const Vocabulary& vocab, std::string_view piece, std::vector<TokenId>& out) {
  if (auto id = vocab.find(piece)) {
    out.push_back(*id);
    return {};
  }
  for (char c : piece) {
    const auto b = static_cast<unsigned char>(c);
    std::optional<TokenId> id = vocab.byte_token(b);
    if (!id) id = vocab.unk();
    if (!id) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", b);
      return make_error(ErrorCode::kUnsupported,
                        std::string("byte ") + hex + " has no <0x..> token and the vocabulary has no unknown token");
    }
    out.push_back(*id);
  }
  return {};
}

}  // namespace

Result<void> spm_tokenize(const Vocabulary& vocab, std::string_view text, SpmScratch& s, std::vector<TokenId>& out) {
  if (text.size() >= std::numeric_limits<std::uint32_t>::max()) {
    return make_error(ErrorCode::kInvalidArgument, "text to tokenize is longer than 4 GiB");
  }
  s.symbols.clear();
  s.heap.clear();
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t start = pos;
    next_code_point(text, pos);
    const auto index = static_cast<std::int32_t>(s.symbols.size());
    s.symbols.push_back({index - 1, -1, static_cast<std::uint32_t>(start), static_cast<std::uint32_t>(pos - start)});
    if (index > 0) s.symbols[static_cast<std::size_t>(index - 1)].next = index;
  }
  const auto n = static_cast<std::int32_t>(s.symbols.size());
  for (std::int32_t i = 0; i + 1 < n; ++i) push_bigram(vocab, text, s, i, i + 1);

  while (!s.heap.empty()) {
    std::pop_heap(s.heap.begin(), s.heap.end(), pops_later);
    const Bigram b = s.heap.back();
    s.heap.pop_back();
    auto& left = s.symbols[static_cast<std::size_t>(b.left)];
    auto& right = s.symbols[static_cast<std::size_t>(b.right)];
    if (left.len == 0 || right.len == 0 || left.len + right.len != b.len) continue;
    left.len += right.len;
    right.len = 0;
    left.next = right.next;
    if (right.next >= 0) s.symbols[static_cast<std::size_t>(right.next)].prev = b.left;
    if (left.prev >= 0) push_bigram(vocab, text, s, left.prev, b.left);
    if (left.next >= 0) push_bigram(vocab, text, s, b.left, left.next);
  }
  for (std::int32_t i = n > 0 ? 0 : -1; i >= 0; i = s.symbols[static_cast<std::size_t>(i)].next) {
    const auto& sym = s.symbols[static_cast<std::size_t>(i)];
    HEARTH_TRY(emit_symbol(vocab, text.substr(sym.start, sym.len), out));
  }
  return {};
}

}  // namespace hearth::tokenizer
