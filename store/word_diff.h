// A word-level diff of two texts, for prompt versions (the CLI's `prompts
// diff` and the app's side-by-side view). Qt-free and SQLite-free: it only
// needs the standard library.
//
// Texts are cut into tokens: runs of non-space characters (words) and runs of
// whitespace. The diff is a longest common subsequence of those tokens, so
//   concat(text of kEqual and kDelete ops) == old text, and
//   concat(text of kEqual and kInsert ops) == new text,
// and adjacent ops of the same kind are merged. A change inside a word shows
// the whole word deleted and inserted.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::store {

enum class DiffOpKind { kEqual, kInsert, kDelete };
const char* to_string(DiffOpKind kind);  // "equal", "insert", "delete"

struct DiffOp {
  DiffOpKind op = DiffOpKind::kEqual;
  std::string text{};
  bool operator==(const DiffOp&) const = default;
};

// Cost bound: the common head and tail are cut first; the middle's LCS table
// is rows x cols cells. Above kMaxDiffCells the middle is reported as one
// delete and one insert (still a correct diff, just not a minimal one).
inline constexpr std::size_t kMaxDiffCells = std::size_t{16} << 20;

std::vector<DiffOp> word_diff(std::string_view old_text, std::string_view new_text);

}  // namespace hearth::store
