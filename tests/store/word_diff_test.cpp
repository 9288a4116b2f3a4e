// word_diff: table-driven cases with exact expected ops, and the invariant
// that the ops rebuild both texts (on generated inputs).
#include "store/word_diff.h"

#include <gtest/gtest.h>

#include <random>

namespace hearth::store {
namespace {

constexpr auto E = DiffOpKind::kEqual;
constexpr auto I = DiffOpKind::kInsert;
constexpr auto D = DiffOpKind::kDelete;

struct Case {
  std::string old_text, new_text;
  std::vector<DiffOp> ops;
};

TEST(WordDiff, Table) {
  const std::vector<Case> cases{
      {"", "", {}},
      {"same text", "same text", {{E, "same text"}}},
      {"", "new", {{I, "new"}}},
      {"old", "", {{D, "old"}}},
      {"a b c", "a x c", {{E, "a "}, {D, "b"}, {I, "x"}, {E, " c"}}},
      {"You are a pirate.", "You are a polite pirate.", {{E, "You are a "}, {I, "polite "}, {E, "pirate."}}},
      {"one two three", "one three", {{E, "one "}, {D, "two "}, {E, "three"}}},
      {"cat", "cart", {{D, "cat"}, {I, "cart"}}},  // words are whole
      {"a  b", "a b", {{E, "a"}, {D, "  "}, {I, " "}, {E, "b"}}},
      {"x\ny", "x y", {{E, "x"}, {D, "\n"}, {I, " "}, {E, "y"}}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(word_diff(c.old_text, c.new_text), c.ops) << "'" << c.old_text << "' -> '" << c.new_text << "'";
  }
  EXPECT_STREQ(to_string(I), "insert");
  EXPECT_STREQ(to_string(D), "delete");
  EXPECT_STREQ(to_string(E), "equal");
}

std::string rebuild(const std::vector<DiffOp>& ops, DiffOpKind skip) {
  std::string out;
  for (const DiffOp& op : ops) {
    if (op.op != skip) out += op.text;
  }
  return out;
}

TEST(WordDiff, OpsRebuildBothTextsAndNeverRepeatAKind) {
  std::mt19937 rng(15);
  const std::vector<std::string> words{"the", "a", "pirate", "polite", "ship", " ", "  ", "\n", "sails"};
  const auto text = [&](int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += words[rng() % words.size()] + (rng() % 3 ? " " : "");
    return s;
  };
  for (int trial = 0; trial < 200; ++trial) {
    const std::string a = text(static_cast<int>(rng() % 30));
    const std::string b = text(static_cast<int>(rng() % 30));
    const std::vector<DiffOp> ops = word_diff(a, b);
    EXPECT_EQ(rebuild(ops, I), a);
    EXPECT_EQ(rebuild(ops, D), b);
    for (std::size_t i = 1; i < ops.size(); ++i) EXPECT_NE(ops[i].op, ops[i - 1].op);
    for (const DiffOp& op : ops) EXPECT_FALSE(op.text.empty());
  }
}

TEST(WordDiff, HugeMiddleFallsBackToOneDeleteAndOneInsert) {
  std::string a = "head ";
  std::string b = "head ";
  for (int i = 0; i < 3000; ++i) {
    a += "a" + std::to_string(i) + " ";
    b += "b" + std::to_string(i) + " ";
  }
  a += "tail";
  b += "tail";
  const std::vector<DiffOp> ops = word_diff(a, b);  // 6000 x 6000 tokens: over kMaxDiffCells
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[0].text, "head ");
  EXPECT_EQ(ops[1].op, D);
  EXPECT_EQ(ops[2].op, I);
  EXPECT_EQ(ops[3].text, " tail");
  EXPECT_EQ(rebuild(ops, I), a);
  EXPECT_EQ(rebuild(ops, D), b);
}

}  // namespace
}  // namespace hearth::store
