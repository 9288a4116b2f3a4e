#include "store/word_diff.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <span>

namespace hearth::store {

namespace {

bool is_space(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

// Alternating runs of whitespace and of everything else, views into `text`.
std::vector<std::string_view> tokens(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size()) {
    const bool space = is_space(text[i]);
    std::size_t end = i + 1;
    while (end < text.size() && is_space(text[end]) == space) ++end;
    out.push_back(text.substr(i, end - i));
    i = end;
  }
  return out;
}

void push(std::vector<DiffOp>& ops, DiffOpKind kind, std::string_view text) {
  if (text.empty()) return;
  if (!ops.empty() && ops.back().op == kind) {
    ops.back().text += text;
  } else {
    ops.push_back(DiffOp{kind, std::string(text)});
  }
}

using Span = std::span<const std::string_view>;

// LCS of a and b by dynamic programming over suffixes: lcs[i][j] is the LCS
// length of a[i..] and b[j..], so the walk from (0, 0) emits in text order.
// Within one step, deletions come before insertions.
void diff_middle(Span a, Span b, std::vector<DiffOp>& ops) {
  const std::size_t n = a.size();
  const std::size_t m = b.size();
  if (n == 0 || m == 0 || (n + 1) * (m + 1) > kMaxDiffCells) {
    for (const auto t : a) push(ops, DiffOpKind::kDelete, t);
    for (const auto t : b) push(ops, DiffOpKind::kInsert, t);
    return;
  }
  std::vector<std::uint32_t> lcs((n + 1) * (m + 1), 0);  // [n + 1][m + 1]
  const auto at = [&](std::size_t i, std::size_t j) -> std::uint32_t& { return lcs[i * (m + 1) + j]; };
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t j = m; j-- > 0;) {
      at(i, j) = a[i] == b[j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
    }
  }
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < n && j < m) {
    if (a[i] == b[j]) {
      push(ops, DiffOpKind::kEqual, a[i]);
      ++i;
      ++j;
    } else if (at(i + 1, j) >= at(i, j + 1)) {
      push(ops, DiffOpKind::kDelete, a[i++]);
    } else {
      push(ops, DiffOpKind::kInsert, b[j++]);
    }
  }
  for (; i < n; ++i) push(ops, DiffOpKind::kDelete, a[i]);
  for (; j < m; ++j) push(ops, DiffOpKind::kInsert, b[j]);
}

}  // namespace

const char* to_string(DiffOpKind kind) {
  switch (kind) {
    case DiffOpKind::kEqual:
      return "equal";
    case DiffOpKind::kInsert:
      return "insert";
    case DiffOpKind::kDelete:
      return "delete";
  }
  return "equal";
}

std::vector<DiffOp> word_diff(std::string_view old_text, std::string_view new_text) {
  const std::vector<std::string_view> a = tokens(old_text);
  const std::vector<std::string_view> b = tokens(new_text);
  std::size_t head = 0;
  while (head < a.size() && head < b.size() && a[head] == b[head]) ++head;
  std::size_t tail = 0;
  while (tail < a.size() - head && tail < b.size() - head && a[a.size() - 1 - tail] == b[b.size() - 1 - tail]) ++tail;
  std::vector<DiffOp> ops;
  for (std::size_t k = 0; k < head; ++k) push(ops, DiffOpKind::kEqual, a[k]);
  diff_middle(Span(a).subspan(head, a.size() - head - tail), Span(b).subspan(head, b.size() - head - tail), ops);
  for (std::size_t k = a.size() - tail; k < a.size(); ++k) push(ops, DiffOpKind::kEqual, a[k]);
  return ops;
}

}  // namespace hearth::store
